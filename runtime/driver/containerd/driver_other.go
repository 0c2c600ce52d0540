//go:build !linux

package containerd

import (
	"context"
	"fmt"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// platform gives the Driver its host methods off Linux: Fingerprint says
// the driver needs Linux, and StartTask, RecoverTask, StopTask,
// DestroyTask and SignalTask fail with driver.ErrNotSupported.
type platform = driver.Unsupported

func newPlatform() platform { return driver.Unsupported{Driver: Name} }

// Cleanup removes stale containers; it always fails off Linux.
func (d *Driver) Cleanup(context.Context, func(string) bool) error {
	return fmt.Errorf("%s: %w", Name, driver.ErrNotSupported)
}
