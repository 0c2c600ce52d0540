//go:build !linux

package alloc

import "errors"

// errNoMounts: bind mounts need Linux.
var errNoMounts = errors.New("alloc: bind mounts are supported on Linux only")

// HostMounter is the real Mounter; off Linux it mounts nothing.
type HostMounter struct{}

var _ Mounter = HostMounter{}

// Bind implements Mounter.
func (HostMounter) Bind(src, dst string, readOnly bool) error { return errNoMounts }

// Unmount implements Mounter: nothing is ever mounted.
func (HostMounter) Unmount(string) error { return nil }

// Mounted implements Mounter.
func (HostMounter) Mounted(string) (bool, error) { return false, nil }
