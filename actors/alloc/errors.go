package alloc

import "errors"

var (
	// ErrUnknownDriver is returned when a task names a driver the client lacks.
	ErrUnknownDriver = errors.New("alloc: unknown driver")
	// ErrIllegalTransition is returned for a task phase change the table forbids.
	ErrIllegalTransition = errors.New("alloc: illegal task transition")
	// ErrNoCSI fails an allocation with a csi volume on a client that has
	// no CSI support (Spec.CSI is nil).
	ErrNoCSI = errors.New("alloc: this client has no CSI support")
	// ErrVolumeSetup wraps every failure to claim or mount a csi volume.
	ErrVolumeSetup = errors.New("alloc: csi volume setup failed")
	// ErrVolumeTeardown wraps every failure to unmount a csi volume or
	// report it detached.
	ErrVolumeTeardown = errors.New("alloc: csi volume teardown failed")
)
