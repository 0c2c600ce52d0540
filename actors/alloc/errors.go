package alloc

import (
	"errors"
	"fmt"
)

var (
	// ErrUnknownDriver is returned when a task names a driver the client lacks.
	ErrUnknownDriver = errors.New("alloc: unknown driver")
	// ErrIllegalTransition is returned for a task phase change the table forbids.
	ErrIllegalTransition = errors.New("alloc: illegal task transition")
	// ErrIllegalLifecycleTransition is returned for an allocation phase
	// change the lifecycle's table forbids.
	ErrIllegalLifecycleTransition = errors.New("alloc: illegal lifecycle transition")
	// ErrUnexpectedLifecycleEvent is returned for an event the lifecycle's
	// phase does not expect (a late worker result or timer): it is ignored.
	ErrUnexpectedLifecycleEvent = errors.New("alloc: unexpected lifecycle event")
	// ErrNoCSI fails an allocation with a csi volume on a client that has
	// no CSI support (Spec.CSI is nil).
	ErrNoCSI = errors.New("alloc: this client has no CSI support")
	// ErrVolumeSetup wraps every failure to claim or mount a csi volume.
	ErrVolumeSetup = errors.New("alloc: csi volume setup failed")
	// ErrVolumeTeardown wraps every failure to unmount a csi volume or
	// report it detached.
	ErrVolumeTeardown = errors.New("alloc: csi volume teardown failed")
	// ErrNoBridge fails an allocation whose group asks for a bridge
	// network on a client without bridge networking (Spec.Network is nil).
	ErrNoBridge = errors.New("alloc: this client has no bridge networking")
	// ErrNoDevicePlugin fails an allocation whose tasks were given device
	// instances on a client without a device plugin (Spec.Devices is nil).
	ErrNoDevicePlugin = errors.New("alloc: this client has no device plugin")
	// ErrDeviceReserve wraps a device plugin's failure to reserve a task's
	// instances; the task's start fails with it.
	ErrDeviceReserve = errors.New("alloc: reserving devices failed")
	// ErrNetworkMode fails an allocation whose group asks for a network
	// mode other than host and bridge.
	ErrNetworkMode = errors.New("alloc: network mode not supported")
	// ErrNetworkSetup wraps every failure to set up or restore an
	// allocation's bridge network.
	ErrNetworkSetup = errors.New("alloc: network setup failed")
	// ErrNetworkTeardown wraps every failure to tear down an allocation's
	// bridge network.
	ErrNetworkTeardown = errors.New("alloc: network teardown failed")
)

// VolumeError is a failed step of one csi volume's setup. It names the
// volume as the server knows it (VolumeID: what an operator looks up with
// `volume status`), the group's name for it when that differs, and the
// step (a CSI RPC, "claim"), and matches ErrVolumeSetup:
//
//	CSI volume "vol0": NodePublishVolume: rpc error: code = ...
type VolumeError struct {
	VolumeID string
	Name     string // the group's name for the volume
	Step     string
	Err      error
}

func (e *VolumeError) Error() string {
	id := fmt.Sprintf("CSI volume %q", e.VolumeID)
	if e.Name != "" && e.Name != e.VolumeID {
		id += fmt.Sprintf(" (group volume %q)", e.Name)
	}
	return fmt.Sprintf("%s: %s: %v", id, e.Step, e.Err)
}

// Unwrap returns the step's error.
func (e *VolumeError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrVolumeSetup) true.
func (e *VolumeError) Is(target error) bool { return target == ErrVolumeSetup }
