package alloc

import (
	"fmt"
	"time"

	"github.com/troupe-dev/troupe/actors"
)

// Phase is where an allocation is in its lifecycle on the client. Setup
// walks the hook list forwards (prerun), teardown backwards (postrun); the
// hook whose phase runs is Lifecycle.Hook.
type Phase uint8

// Allocation phases. The zero value is the first: reading the state file.
const (
	PhaseLoading     Phase = iota // reading the state file (again, after a failed read)
	PhasePrerun                   // a hook's prerun runs
	PhasePrerunWait               // a failed prerun waits to be tried again
	PhaseRunning                  // the tasks run
	PhaseStopping                 // the tasks were told to stop
	PhasePostrun                  // a hook's postrun (or abandon) runs
	PhasePostrunWait              // a failed postrun waits to be tried again
	PhaseTerminal                 // everything is let go
)

var phaseNames = [...]string{
	PhaseLoading:     "loading",
	PhasePrerun:      "prerun",
	PhasePrerunWait:  "waiting to retry prerun",
	PhaseRunning:     "running",
	PhaseStopping:    "stopping",
	PhasePostrun:     "postrun",
	PhasePostrunWait: "waiting to retry postrun",
	PhaseTerminal:    "terminal",
}

// String names the phase for the actor tree and the logs.
func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("Phase(%d)", uint8(p))
}

// lifecycleTransitions lists, for each phase, the phases it may move to.
// Prerun -> Prerun and Postrun -> Postrun are the next hook; every phase
// before the tasks run may end in Terminal (a refused allocation, a setup
// failure that holds nothing) and every phase up to Stopping may start the
// teardown (Postrun).
var lifecycleTransitions = map[Phase][]Phase{
	PhaseLoading:     {PhaseLoading, PhasePrerun, PhaseRunning, PhaseStopping, PhasePostrun, PhaseTerminal},
	PhasePrerun:      {PhasePrerun, PhasePrerunWait, PhaseRunning, PhaseStopping, PhasePostrun, PhaseTerminal},
	PhasePrerunWait:  {PhasePrerun, PhasePostrun, PhaseTerminal},
	PhaseRunning:     {PhaseStopping, PhasePostrun, PhaseTerminal},
	PhaseStopping:    {PhasePostrun, PhaseTerminal},
	PhasePostrun:     {PhasePostrun, PhasePostrunWait, PhaseTerminal},
	PhasePostrunWait: {PhasePostrun},
	PhaseTerminal:    {},
}

// CanLifecycleTransition reports whether an allocation may move from one
// phase to another.
func CanLifecycleTransition(from, to Phase) bool {
	for _, p := range lifecycleTransitions[from] {
		if p == to {
			return true
		}
	}
	return false
}

// HookPhase is the phase of a hook that the lifecycle asks to run.
type HookPhase uint8

// Hook phases the lifecycle runs. Abandon runs after a hook's last failed
// postrun try (the network hook forgets its record).
const (
	HookPrerun HookPhase = iota
	HookPostrun
	HookAbandon
)

func (p HookPhase) String() string {
	return [...]string{"prerun", "postrun", "abandon"}[p]
}

// HookRetry says how a failed hook phase is tried again: after Policy's
// delay, within its attempts and deadline, when Retryable(err) (nil: every
// error).
type HookRetry struct {
	Policy    actors.Retry
	Retryable func(error) bool
}

// next counts a try that failed with err at at and returns the wait
// before the next one (false: no retry).
func (r *HookRetry) next(err error, tries *actors.Tries, at time.Time) (time.Duration, bool) {
	if r == nil {
		return 0, false
	}
	d, ok := r.Policy.Next(tries, at)
	if r.Retryable != nil && !r.Retryable(err) {
		return 0, false
	}
	return d, ok
}

// HookPlan is what the lifecycle knows of one hook of the list: which
// phases it has and how their failures are retried.
type HookPlan struct {
	Name            string
	Prerun, Postrun bool
	// PrerunRetry retries a failed prerun; a hook with one also ends the
	// setup as stopped (complete) when it fails once a stop is wanted.
	// nil: a failed prerun fails the allocation.
	PrerunRetry *HookRetry
	// PostrunRetry retries a failed postrun; nil: the teardown goes on.
	PostrunRetry *HookRetry
	// Abandon: after the last failed postrun try the hook's abandon runs.
	Abandon bool
}

// Event is one thing that happens to an allocation's lifecycle.
type Event interface{ isEvent() }

// Loaded says the state file was read (Err nil) and what the allocation
// holds, or that it could not be read (Err, at At): nothing is known, so
// nothing may start.
type Loaded struct {
	Err        error
	At         time.Time
	BadName    error // checkNames refused the allocation
	NoTasks    bool  // its task group is not in its job
	Terminal   bool  // its stored client status is final
	StopWanted bool  // its desired status is stop or evict
	Handles    bool  // a task handle is stored: tasks may run
	Holding    bool  // a hook may still hold something (a volume, a network)
}

// HookDone says the current hook's phase ended (Err nil: it worked), at At;
// Holding: a hook may still hold something.
type HookDone struct {
	Phase   HookPhase
	Err     error
	Holding bool
	At      time.Time
}

// RetryDue says the retry timer fired.
type RetryDue struct{}

// Updated says the server updated the allocation.
type Updated struct {
	StopWanted  bool
	Description string // the desired description, for the kill reason
}

// TaskDied says a task is dead.
type TaskDied struct {
	Task           string
	Failed, Leader bool
}

// TasksDead says every task is dead.
type TasksDead struct{}

func (Loaded) isEvent()    {}
func (HookDone) isEvent()  {}
func (RetryDue) isEvent()  {}
func (Updated) isEvent()   {}
func (TaskDied) isEvent()  {}
func (TasksDead) isEvent() {}

// HookStep names one phase of one hook (an index into the hook list).
type HookStep struct {
	Hook  int
	Phase HookPhase
}

// Effects is what the actor must do after a step, in this order.
type Effects struct {
	StopTimer   bool          // stop the pending retry timer
	Refuse      bool          // give every task a dead state saying Description (unsafe names)
	FailTasks   bool          // mark every task not dead failed, with Description
	Status      string        // set (store and report) the client status; "" unchanged
	Description string        // the client description with Status
	Report      bool          // report the allocation to the parent
	StartTasks  bool          // spawn the task actors
	KillTasks   string        // tell every task to stop, for this reason; "" none
	Update      bool          // run the update hooks
	Run         *HookStep     // start this hook phase; HookDone when it ends
	RetryIn     time.Duration // arm the retry timer: RetryDue when it fires
	Load        bool          // read the state file (again)
	Released    bool          // tell the parent the allocation let go of everything
}

// Client descriptions the lifecycle sets.
const (
	DescNoTaskGroup    = "task group not found in job"
	DescStoppedEarly   = "stopped before start"
	DescStoppedInSetup = "allocation stopped before its setup was done"
	DescSetupFailed    = "setup failed: "
)

// Lifecycle is the state machine of one allocation on the client: it
// walks the hook list forwards before the tasks start and backwards after
// they are dead, retries failed hook phases and state reads, and decides
// stops. It does no I/O and reads no clock: time comes in the events.
type Lifecycle struct {
	hooks     []HookPlan
	loadRetry actors.Retry
	phase     Phase
	hook      int          // the hook whose phase runs or waits
	abandon   bool         // the hook's abandon runs, not its postrun
	loadWait  bool         // a failed state read waits for RetryDue
	stop      bool         // a stop is wanted
	tries     actors.Tries // failed tries of the current hook phase, or state reads
}

// NewLifecycle returns the lifecycle of an allocation with the hook list
// hooks; a failed state read is tried again after loadRetry's delay, for
// ever (starting tasks that may run is worse than waiting): its attempts
// and deadline do not count.
func NewLifecycle(hooks []HookPlan, loadRetry actors.Retry) *Lifecycle {
	loadRetry.Attempts, loadRetry.Deadline = 0, 0
	return &Lifecycle{hooks: hooks, loadRetry: loadRetry}
}

// Phase returns the current phase.
func (l *Lifecycle) Phase() Phase { return l.phase }

// Hook returns the index of the hook whose phase runs or waits to retry,
// -1 in other phases.
func (l *Lifecycle) Hook() int {
	switch l.phase {
	case PhasePrerun, PhasePrerunWait, PhasePostrun, PhasePostrunWait:
		return l.hook
	}
	return -1
}

// Tries returns how many tries of the current hook phase (or state reads)
// failed so far.
func (l *Lifecycle) Tries() int { return l.tries.N }

// Abandoning reports whether the current hook's abandon runs.
func (l *Lifecycle) Abandoning() bool { return l.abandon && l.phase == PhasePostrun }

// Step takes one event and returns the effects. On error (an event the
// phase does not expect: a late worker result or timer) nothing changes.
func (l *Lifecycle) Step(ev Event) (Effects, error) {
	next := *l
	eff, err := next.step(ev)
	if err != nil {
		return Effects{}, err
	}
	*l = next
	return eff, nil
}

func (l *Lifecycle) step(ev Event) (Effects, error) {
	switch e := ev.(type) {
	case Loaded:
		return l.onLoaded(e)
	case HookDone:
		return l.onHookDone(e)
	case RetryDue:
		return l.onRetryDue()
	case Updated:
		return l.onUpdated(e), nil
	case TaskDied:
		return l.onTaskDied(e), nil
	case TasksDead:
		return l.onTasksDead(), nil
	default:
		return Effects{}, fmt.Errorf("%w: %T", ErrUnexpectedLifecycleEvent, ev)
	}
}

// become moves to a new phase if the table allows it.
func (l *Lifecycle) become(to Phase) error {
	if !CanLifecycleTransition(l.phase, to) {
		return fmt.Errorf("%w: %s -> %s", ErrIllegalLifecycleTransition, l.phase, to)
	}
	l.phase = to
	return nil
}

func (l *Lifecycle) unexpected(ev Event) error {
	return fmt.Errorf("%w: %T in phase %s", ErrUnexpectedLifecycleEvent, ev, l.phase)
}
