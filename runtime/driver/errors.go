package driver

import "errors"

// Sentinel errors shared by every driver. Drivers wrap them with %w.
var (
	// ErrTaskNotFound: the driver does not know the task, or the task's
	// process is gone (or its pid was reused) when recovering.
	ErrTaskNotFound = errors.New("driver: task not found")
	// ErrTaskAlreadyStarted: StartTask for an ID that is still running.
	ErrTaskAlreadyStarted = errors.New("driver: task already started")
	// ErrTaskRunning: DestroyTask without force on a running task.
	ErrTaskRunning = errors.New("driver: task still running")
	// ErrInvalidConfig: the task config is missing or malformed.
	ErrInvalidConfig = errors.New("driver: invalid task config")
	// ErrInvalidHandle: a handle that this driver cannot recover.
	ErrInvalidHandle = errors.New("driver: invalid task handle")
	// ErrUnknownSignal: a signal name that ParseSignal does not know.
	ErrUnknownSignal = errors.New("driver: unknown signal")
	// ErrNotSupported: the driver cannot run on this platform.
	ErrNotSupported = errors.New("driver: not supported on this platform")
	// ErrExecNotSupported: the driver cannot run a command in its tasks
	// (Execer).
	ErrExecNotSupported = errors.New("driver: exec not supported")
	// ErrStatsNotSupported: the driver does not report its tasks' usage
	// (Statser), or this task has no usage to report (no cgroup).
	ErrStatsNotSupported = errors.New("driver: resource usage not supported")
	// ErrShutdown: the driver was shut down; waits end with this error.
	ErrShutdown = errors.New("driver: shut down")
)
