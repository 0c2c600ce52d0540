package containerd

import "errors"

// Sentinel errors of the containerd driver; see also the driver package's.
var (
	// ErrImagePull: the task's image could not be pulled from its registry
	// (unknown image, unreachable registry, refused credentials).
	ErrImagePull = errors.New("containerd: pulling image failed")
	// ErrImageImport: an "oci-archive://" image could not be imported.
	ErrImageImport = errors.New("containerd: importing image archive failed")
	// ErrUnavailable: containerd did not answer on its socket.
	ErrUnavailable = errors.New("containerd: daemon unavailable")
	// ErrTaskStart: containerd could not create or start the task (a bad
	// command, a bad mount, a runtime error).
	ErrTaskStart = errors.New("containerd: starting task failed")
	// ErrWaitLost: the driver lost track of a running task because
	// containerd stayed unreachable past Config.ReconnectTimeout.
	ErrWaitLost = errors.New("containerd: lost contact with the task")
)
