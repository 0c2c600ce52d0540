package cni

import (
	"errors"
	"fmt"
)

// Sentinel errors of the cni package. Errors that a CNI plugin returned are
// wrapped into ErrPlugin and keep the plugin's message.
var (
	// ErrInvalidConfig: Config has a bad value; nothing was created.
	ErrInvalidConfig = errors.New("cni: invalid config")
	// ErrInvalidRequest: a SetupRequest is missing a field or has a bad
	// one; nothing was created.
	ErrInvalidRequest = errors.New("cni: invalid request")
	// ErrPluginNotFound: a plugin of the network is in none of PluginDirs.
	ErrPluginNotFound = errors.New("cni: plugin not found")
	// ErrPortInUse: a static host port is already taken, by a socket on the
	// host or by another allocation's port mapping. See PortInUseError.
	ErrPortInUse = errors.New("cni: host port is already in use")
	// ErrExists: Setup found the allocation's network namespace already
	// there; call Restore (or Teardown first).
	ErrExists = errors.New("cni: network namespace already exists")
	// ErrPlugin: a CNI plugin failed (ADD, CHECK or DEL).
	ErrPlugin = errors.New("cni: plugin failed")
	// ErrBadResult: a CNI result (fresh or persisted) could not be read or
	// has no IPv4 address for the allocation's interface.
	ErrBadResult = errors.New("cni: bad CNI result")
	// ErrNetns: creating or removing a network namespace failed.
	ErrNetns = errors.New("cni: network namespace")
	// ErrCleanup: the forced cleanup (iptables rules, IPAM reservation,
	// netns) did not finish; Teardown can be called again.
	ErrCleanup = errors.New("cni: cleanup failed")
)

// PortInUseError says which static host port is taken, and by what. It
// matches ErrPortInUse with errors.Is.
type PortInUseError struct {
	Port     int    // the host port
	Protocol string // "tcp" or "udp"
	By       string // "a socket on the host" or "the port mapping of allocation X"
}

func (e *PortInUseError) Error() string {
	return fmt.Sprintf("cni: port %d (%s) is already in use by %s", e.Port, e.Protocol, e.By)
}

// Is makes errors.Is(err, ErrPortInUse) true.
func (e *PortInUseError) Is(target error) bool { return target == ErrPortInUse }
