//go:build !linux

package qemu

import "github.com/troupe-dev/troupe/runtime/driver"

// platform gives the Driver its host methods off Linux, where they fail.
type platform = driver.Unsupported

func newPlatform() platform { return driver.Unsupported{Driver: Name} }

func kvmUsable() bool { return false }
