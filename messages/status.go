package messages

// Status values, spelled as Nomad's API spells them. The protobuf fields
// that carry them stay strings (the JSON and the raft log are unchanged);
// the constants are untyped so that those fields take them as they are,
// as Nomad's structs do. Every package names these instead of literals.

// Allocation client statuses (Allocation.ClientStatus).
const (
	AllocClientStatusPending  = "pending"
	AllocClientStatusRunning  = "running"
	AllocClientStatusComplete = "complete"
	AllocClientStatusFailed   = "failed"
	AllocClientStatusLost     = "lost"
	// AllocClientStatusUnknown: the allocation's node is disconnected; it
	// may still run.
	AllocClientStatusUnknown = "unknown"
)

// Allocation desired statuses (Allocation.DesiredStatus).
const (
	AllocDesiredStatusRun   = "run"
	AllocDesiredStatusStop  = "stop"
	AllocDesiredStatusEvict = "evict"
)

// Evaluation statuses (Evaluation.Status).
const (
	EvalStatusPending  = "pending"
	EvalStatusBlocked  = "blocked"
	EvalStatusComplete = "complete"
	EvalStatusFailed   = "failed"
	EvalStatusCanceled = "canceled"
)

// Node statuses (Node.Status).
const (
	NodeStatusInit         = "initializing"
	NodeStatusReady        = "ready"
	NodeStatusDisconnected = "disconnected"
	NodeStatusDown         = "down"
)

// Node scheduling eligibilities (Node.SchedulingEligibility).
const (
	NodeSchedulingEligible   = "eligible"
	NodeSchedulingIneligible = "ineligible"
)

// Job statuses (Job.Status).
const (
	JobStatusPending = "pending"
	JobStatusRunning = "running"
	JobStatusDead    = "dead"
)

// Task states (TaskState.State).
const (
	TaskStatePending = "pending"
	TaskStateRunning = "running"
	TaskStateDead    = "dead"
)

// ClientTerminalStatus reports whether an allocation client status is
// final (complete, failed or lost): its tasks will not run again.
func ClientTerminalStatus(status string) bool {
	switch status {
	case AllocClientStatusComplete, AllocClientStatusFailed, AllocClientStatusLost:
		return true
	}
	return false
}

// ServerTerminalStatus reports whether an allocation desired status tells
// the client to stop it (stop or evict).
func ServerTerminalStatus(desired string) bool {
	return desired == AllocDesiredStatusStop || desired == AllocDesiredStatusEvict
}

// ClientTerminalStatus reports whether the allocation is finished on its
// client (complete, failed or lost), as Nomad's method of that name.
func (x *Allocation) ClientTerminalStatus() bool {
	return ClientTerminalStatus(x.GetClientStatus())
}

// ServerTerminalStatus reports whether the servers stopped the allocation
// (desired stop or evict), as Nomad's method of that name.
func (x *Allocation) ServerTerminalStatus() bool {
	return ServerTerminalStatus(x.GetDesiredStatus())
}

// TerminalStatus reports whether the allocation is done: stopped by the
// servers or finished on its client. Such an allocation no longer holds
// its node's resources.
func (x *Allocation) TerminalStatus() bool {
	return x.ServerTerminalStatus() || x.ClientTerminalStatus()
}

// EvalTerminalStatus reports whether an evaluation status is final
// (complete, failed or canceled). Blocked is not: a blocked evaluation is
// unblocked later.
func EvalTerminalStatus(status string) bool {
	switch status {
	case EvalStatusComplete, EvalStatusFailed, EvalStatusCanceled:
		return true
	}
	return false
}

// TerminalStatus reports whether the evaluation is final (complete, failed
// or canceled), as Nomad's method of that name.
func (x *Evaluation) TerminalStatus() bool { return EvalTerminalStatus(x.GetStatus()) }
