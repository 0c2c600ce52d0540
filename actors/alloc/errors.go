package alloc

import (
	"errors"
	"fmt"
)

var (
	// errVarDenied: a template's read of a variable or a service was
	// refused to its task's workload identity.
	errVarDenied = errors.New("alloc: permission denied")
	// errPayloadCorrupt fails an allocation whose dispatched job's payload
	// is not snappy-compressed data.
	errPayloadCorrupt = errors.New("alloc: dispatch payload does not decompress")
	// errUnknownDriver is returned when a task names a driver the client lacks.
	errUnknownDriver = errors.New("alloc: unknown driver")
	// errHostVolume is returned for a task whose host volume mounts do
	// not resolve on this node.
	errHostVolume = errors.New("alloc: host volumes")
	// errIllegalTransition is returned for a task phase change the table forbids.
	errIllegalTransition = errors.New("alloc: illegal task transition")
	// errIllegalLifecycleTransition is returned for an allocation phase
	// change the lifecycle's table forbids.
	errIllegalLifecycleTransition = errors.New("alloc: illegal lifecycle transition")
	// errUnexpectedLifecycleEvent is returned for an event the lifecycle's
	// phase does not expect (a late worker result or timer): it is ignored.
	errUnexpectedLifecycleEvent = errors.New("alloc: unexpected lifecycle event")
	// errNoCSI fails an allocation with a csi volume on a client that has
	// no CSI support (Spec.CSI is nil).
	errNoCSI = errors.New("alloc: this client has no CSI support")
	// errVolumeSetup wraps every failure to claim or mount a csi volume.
	errVolumeSetup = errors.New("alloc: csi volume setup failed")
	// errVolumeTeardown wraps every failure to unmount a csi volume or
	// report it detached.
	errVolumeTeardown = errors.New("alloc: csi volume teardown failed")
	// errNoBridge fails an allocation whose group asks for a bridge
	// network on a client without bridge networking (Spec.Network is nil).
	errNoBridge = errors.New("alloc: this client has no bridge networking")
	// errNoDevicePlugin fails an allocation whose tasks were given device
	// instances on a client without a device plugin (Spec.Devices is nil).
	errNoDevicePlugin = errors.New("alloc: this client has no device plugin")
	// errDeviceReserve wraps a device plugin's failure to reserve a task's
	// instances; the task's start fails with it.
	errDeviceReserve = errors.New("alloc: reserving devices failed")
	// errNetworkMode fails an allocation whose group asks for a network
	// mode other than host and bridge.
	errNetworkMode = errors.New("alloc: network mode not supported")
	// errNetworkSetup wraps every failure to set up or restore an
	// allocation's bridge network.
	errNetworkSetup = errors.New("alloc: network setup failed")
	// errNetworkTeardown wraps every failure to tear down an allocation's
	// bridge network.
	errNetworkTeardown = errors.New("alloc: network teardown failed")
	// errTaskNotRunning refuses an operator's signal or restart of a task
	// that does not run (or did not run again).
	errTaskNotRunning = errors.New("alloc: task not running")
	// errUnknownTask refuses an operator's request naming a task the
	// allocation does not have.
	errUnknownTask = errors.New("alloc: unknown task")
	// errAllocNotReady refuses an operator's request before the
	// allocation's tasks were started.
	errAllocNotReady = errors.New("alloc: the allocation's tasks are not started")
)

// volumeError is a failed step of one csi volume's setup. It names the
// volume as the server knows it (VolumeID: what an operator looks up with
// `volume status`), the group's name for it when that differs, and the
// step (a CSI RPC, "claim"), and matches errVolumeSetup:
//
//	CSI volume "vol0": NodePublishVolume: rpc error: code = ...
type volumeError struct {
	VolumeID string
	Name     string // the group's name for the volume
	Step     string
	Err      error
}

func (e *volumeError) Error() string {
	id := fmt.Sprintf("CSI volume %q", e.VolumeID)
	if e.Name != "" && e.Name != e.VolumeID {
		id += fmt.Sprintf(" (group volume %q)", e.Name)
	}
	return fmt.Sprintf("%s: %s: %v", id, e.Step, e.Err)
}

// Unwrap returns the step's error.
func (e *volumeError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, errVolumeSetup) true.
func (e *volumeError) Is(target error) bool { return target == errVolumeSetup }
