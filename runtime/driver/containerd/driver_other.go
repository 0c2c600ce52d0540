//go:build !linux

package containerd

import (
	"context"
	"fmt"
	"time"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// Fingerprint implements driver.Driver: the driver needs Linux.
func (d *Driver) Fingerprint(context.Context) driver.Fingerprint {
	return driver.Fingerprint{HealthDescription: driver.ErrNotSupported.Error()}
}

// StartTask implements driver.Driver; it always fails off Linux.
func (d *Driver) StartTask(context.Context, *driver.TaskConfig) (*driver.TaskHandle, error) {
	return nil, fmt.Errorf("%s: %w", Name, driver.ErrNotSupported)
}

// RecoverTask implements driver.Driver; it always fails off Linux.
func (d *Driver) RecoverTask(context.Context, *driver.TaskHandle) error {
	return fmt.Errorf("%s: %w", Name, driver.ErrNotSupported)
}

// StopTask implements driver.Driver; it always fails off Linux.
func (d *Driver) StopTask(context.Context, string, time.Duration, string) error {
	return fmt.Errorf("%s: %w", Name, driver.ErrNotSupported)
}

// DestroyTask implements driver.Driver; it always fails off Linux.
func (d *Driver) DestroyTask(context.Context, string, bool) error {
	return fmt.Errorf("%s: %w", Name, driver.ErrNotSupported)
}

// SignalTask implements driver.Driver; it always fails off Linux.
func (d *Driver) SignalTask(context.Context, string, string) error {
	return fmt.Errorf("%s: %w", Name, driver.ErrNotSupported)
}

// Cleanup removes stale containers; it always fails off Linux.
func (d *Driver) Cleanup(context.Context, func(string) bool) error {
	return fmt.Errorf("%s: %w", Name, driver.ErrNotSupported)
}
