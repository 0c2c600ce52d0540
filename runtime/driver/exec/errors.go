package exec

import "errors"

// Sentinel errors of the exec driver; see also the driver package's.
var (
	// ErrStartTimeout: the executor did not report the task's pid in time.
	ErrStartTimeout = errors.New("exec: task did not start in time")
	// ErrTaskStart: the executor could not start the task's command.
	ErrTaskStart = errors.New("exec: starting task failed")
	// ErrExecutorLost: the executor ended without writing an exit status.
	ErrExecutorLost = errors.New("exec: executor exited without an exit status")
	// ErrExecutorUsage: ExecutorMain got bad arguments or a bad spec.
	ErrExecutorUsage = errors.New("exec: bad executor invocation")
	// ErrNetns: the executor could not start the task in its network
	// namespace (TaskConfig.NetnsPath).
	ErrNetns = errors.New("exec: network namespace")
)
