package driver

import (
	"context"
	"fmt"
	"time"
)

// TaskUsage is one sample of a task's resource usage, in the units of
// Nomad's ResourceUsage: bytes, percentages of one core, nanoseconds.
type TaskUsage struct {
	Timestamp time.Time
	Memory    MemoryUsage
	CPU       CPUUsage
}

// MemoryUsage is a task's memory, in bytes; Measured names the figures
// the driver measures (Nomad's names: "RSS", "Cache", ...).
type MemoryUsage struct {
	RSS, Cache, Swap, Usage, MaxUsage, KernelUsage, KernelMaxUsage uint64
	Measured                                                       []string
}

// CPUUsage is a task's CPU since the previous sample (the first: since it
// started): percentages of one core, and its throttling counters.
type CPUUsage struct {
	SystemMode, UserMode, Percent float64
	ThrottledPeriods              uint64
	ThrottledTime                 uint64 // ns
	Measured                      []string
}

// Statser is a driver that reports its tasks' resource usage.
type Statser interface {
	// TaskStats samples a running task's usage; a task it does not know
	// is a wrapped ErrTaskNotFound.
	TaskStats(ctx context.Context, taskID string) (*TaskUsage, error)
}

// StatsOf samples taskID through d when d is a Statser; any other driver
// is a wrapped ErrStatsNotSupported.
func StatsOf(ctx context.Context, d Driver, taskID string) (*TaskUsage, error) {
	s, ok := d.(Statser)
	if !ok {
		return nil, fmt.Errorf("%w: the %s driver does not report usage", ErrStatsNotSupported, d.Name())
	}
	return s.TaskStats(ctx, taskID)
}
