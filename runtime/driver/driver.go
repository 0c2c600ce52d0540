package driver

import (
	"context"
	"encoding/json"
	"time"
)

// TaskConfig is everything a driver needs to start one task.
type TaskConfig struct {
	// ID is the unique task id: "<allocID>/<taskName>".
	ID       string
	AllocID  string
	TaskName string
	// Config is the task's driver config (structpb AsMap). The exec driver
	// reads "command" (string) and "args" ([]any of strings).
	Config map[string]any
	// Env is the task's whole environment.
	Env map[string]string
	// User runs the task as this user when the agent is root.
	User string
	// TaskDir is the task's working directory; it exists.
	TaskDir    string
	StdoutPath string
	StderrPath string

	// LogMaxFiles and LogMaxFileSizeMB (the task's logs block) make the
	// drivers (exec, raw_exec, java, containerd, qemu) write StdoutPath
	// and StderrPath rotated, as base.0, base.1, ... (runtime/logrotate);
	// 0: the one file.
	LogMaxFiles      int
	LogMaxFileSizeMB int

	// CPU in MHz, memory in MB (soft limit and hard maximum).
	CPU         int64
	MemoryMB    int64
	MemoryMaxMB int64
	// Cores is how many whole CPU cores the task gets for itself (a
	// cpuset); 0: it shares them all.
	Cores int
	// ReservedCores are the core IDs the scheduler reserved for the task
	// on this node (its AllocatedResources' ReservedCores). When set they
	// are the task's cpuset; a driver picks Cores itself only without.
	ReservedCores []int
	// NetnsPath: join this network namespace; empty = the host's.
	NetnsPath string
	// Isolation, when set, runs the task in its own root and namespaces.
	Isolation *Isolation
}

// TaskHandle identifies a started task. It is JSON-serialisable: the client
// persists it in its state file and passes it to RecoverTask after an agent
// restart.
type TaskHandle struct {
	Driver string
	TaskID string
	// Pid is the task's main process.
	Pid int
	// StartTicks is field 22 (starttime) of /proc/<Pid>/stat; a pid whose
	// starttime differs was reused by another process.
	StartTicks uint64
	StartedAt  time.Time
	// State is private to the driver that made the handle.
	State json.RawMessage
}

// ExitResult is how a task ended.
type ExitResult struct {
	// ExitCode is the process's exit status; 128+signal when a signal
	// killed it (as shells report it).
	ExitCode int
	// Signal is the signal that killed the task, 0 if it exited.
	Signal    int
	OOMKilled bool
	// Err is set when the driver could not learn how the task ended.
	Err error
}

// Successful reports whether the task exited 0 on its own, without error.
func (r *ExitResult) Successful() bool {
	return r.ExitCode == 0 && r.Signal == 0 && !r.OOMKilled && r.Err == nil
}

// Fingerprint says whether a driver can run tasks on this host.
type Fingerprint struct {
	Detected          bool
	Healthy           bool
	HealthDescription string
	// Attributes are node attributes, e.g. {"driver.exec": "1"}.
	Attributes map[string]string
}

// Driver runs tasks on the host. Every method may block on the host (it
// starts processes and waits for them), so actors call it from a worker.
type Driver interface {
	// Name is the driver's name as used in job files ("exec").
	Name() string
	// Fingerprint probes the host.
	Fingerprint(ctx context.Context) Fingerprint
	// StartTask starts a task; ErrTaskAlreadyStarted if cfg.ID is running.
	StartTask(ctx context.Context, cfg *TaskConfig) (*TaskHandle, error)
	// RecoverTask re-attaches to a task after an agent restart. It fails
	// with a wrapped ErrTaskNotFound when the task is gone or its pid was
	// reused. A task that finished meanwhile recovers, and WaitTask yields
	// its result at once.
	RecoverTask(ctx context.Context, h *TaskHandle) error
	// WaitTask returns a channel that receives exactly one result, when the
	// task exits (or with Err set when ctx ends first), and then closes.
	WaitTask(ctx context.Context, taskID string) (<-chan *ExitResult, error)
	// StopTask sends signal (default SIGTERM) to the task's process group,
	// SIGKILLs it after timeout, and returns once the task is gone.
	StopTask(ctx context.Context, taskID string, timeout time.Duration, signal string) error
	// DestroyTask forgets a task; with force it kills a running task first,
	// without it a running task is an ErrTaskRunning.
	DestroyTask(ctx context.Context, taskID string, force bool) error
	// SignalTask sends a signal to the task.
	SignalTask(ctx context.Context, taskID string, signal string) error
}
