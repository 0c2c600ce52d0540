package driver

import (
	"context"
	"fmt"
	"time"
)

// Unsupported gives a driver its host methods on a platform it cannot run
// on: Fingerprint reports it not detected, and the others fail with a
// wrapped ErrNotSupported. A driver's Driver type embeds it off Linux.
type Unsupported struct {
	// Driver is the driver's name, which prefixes the errors.
	Driver string
}

// Fingerprint implements Driver: the driver is not detected.
func (Unsupported) Fingerprint(context.Context) Fingerprint {
	return Fingerprint{HealthDescription: ErrNotSupported.Error()}
}

// StartTask implements Driver; it always fails.
func (u Unsupported) StartTask(context.Context, *TaskConfig) (*TaskHandle, error) {
	return nil, u.err()
}

// RecoverTask implements Driver; it always fails.
func (u Unsupported) RecoverTask(context.Context, *TaskHandle) error { return u.err() }

// StopTask implements Driver; it always fails.
func (u Unsupported) StopTask(context.Context, string, time.Duration, string) error { return u.err() }

// DestroyTask implements Driver; it always fails.
func (u Unsupported) DestroyTask(context.Context, string, bool) error { return u.err() }

// SignalTask implements Driver; it always fails.
func (u Unsupported) SignalTask(context.Context, string, string) error { return u.err() }

func (u Unsupported) err() error { return fmt.Errorf("%s: %w", u.Driver, ErrNotSupported) }
