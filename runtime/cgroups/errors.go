package cgroups

import "errors"

var (
	// ErrUnavailable: the host has no usable cgroup file system (or the
	// agent is not root).
	ErrUnavailable = errors.New("cgroups: not available on this host")
	// ErrInvalidName: a group or parent name that is not a plain path.
	ErrInvalidName = errors.New("cgroups: invalid name")
	// ErrNotEmpty: Delete found processes it could not kill in time.
	ErrNotEmpty = errors.New("cgroups: group still has processes")
	// ErrControllerMissing: a limit needs a controller the hierarchy does
	// not offer (v2: not in the root's cgroup.controllers, as on a hybrid
	// host whose controllers are bound to v1); the error names it.
	ErrControllerMissing = errors.New("cgroups: controller missing")
)
