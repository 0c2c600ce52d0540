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
)
