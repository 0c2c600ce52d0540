package alloc

import (
	"fmt"
	"time"

	"github.com/troupe-dev/troupe/actors"
)

// phase is where an allocation is in its lifecycle on the client. Setup
// walks the hook list forwards (prerun), teardown backwards (postrun); the
// hook whose phase runs is Lifecycle.Hook.
type phase uint8

// Allocation phases. The zero value is the first: reading the state file.
const (
	phaseLoading     phase = iota // reading the state file (again, after a failed read)
	phasePrerun                   // a hook's prerun runs
	phasePrerunWait               // a failed prerun waits to be tried again
	phaseRunning                  // the tasks run
	phaseStopping                 // the tasks were told to stop
	phasePostrun                  // a hook's postrun (or abandon) runs
	phasePostrunWait              // a failed postrun waits to be tried again
	phaseTerminal                 // everything is let go
)

var phaseNames = [...]string{
	phaseLoading:     "loading",
	phasePrerun:      "prerun",
	phasePrerunWait:  "waiting to retry prerun",
	phaseRunning:     "running",
	phaseStopping:    "stopping",
	phasePostrun:     "postrun",
	phasePostrunWait: "waiting to retry postrun",
	phaseTerminal:    "terminal",
}

// String names the phase for the actor tree and the logs.
func (p phase) String() string {
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
var lifecycleTransitions = map[phase][]phase{
	phaseLoading:     {phaseLoading, phasePrerun, phaseRunning, phaseStopping, phasePostrun, phaseTerminal},
	phasePrerun:      {phasePrerun, phasePrerunWait, phaseRunning, phaseStopping, phasePostrun, phaseTerminal},
	phasePrerunWait:  {phasePrerun, phasePostrun, phaseTerminal},
	phaseRunning:     {phaseStopping, phasePostrun, phaseTerminal},
	phaseStopping:    {phasePostrun, phaseTerminal},
	phasePostrun:     {phasePostrun, phasePostrunWait, phaseTerminal},
	phasePostrunWait: {phasePostrun},
	phaseTerminal:    {},
}

// canLifecycleTransition reports whether an allocation may move from one
// phase to another.
func canLifecycleTransition(from, to phase) bool {
	for _, p := range lifecycleTransitions[from] {
		if p == to {
			return true
		}
	}
	return false
}

// hookPhase is the phase of a hook that the lifecycle asks to run.
type hookPhase uint8

// Hook phases the lifecycle runs. Abandon runs after a hook's last failed
// postrun try (the network hook forgets its record).
const (
	hookPrerun hookPhase = iota
	hookPostrun
	hookAbandon
)

func (p hookPhase) String() string {
	return [...]string{"prerun", "postrun", "abandon"}[p]
}

// hookRetry says how a failed hook phase is tried again: after Policy's
// delay, within its attempts and deadline, when Retryable(err) (nil: every
// error).
type hookRetry struct {
	Policy    actors.Retry
	Retryable func(error) bool
}

// next counts a try that failed with err at at and returns the wait
// before the next one (false: no retry).
func (r *hookRetry) next(err error, tries *actors.Tries, at time.Time) (time.Duration, bool) {
	if r == nil {
		return 0, false
	}
	d, ok := r.Policy.Next(tries, at)
	if r.Retryable != nil && !r.Retryable(err) {
		return 0, false
	}
	return d, ok
}

// hookPlan is what the lifecycle knows of one hook of the list: which
// phases it has and how their failures are retried.
type hookPlan struct {
	Name            string
	Prerun, Postrun bool
	// PrerunRetry retries a failed prerun; a hook with one also ends the
	// setup as stopped (complete) when it fails once a stop is wanted.
	// nil: a failed prerun fails the allocation.
	PrerunRetry *hookRetry
	// PostrunRetry retries a failed postrun; nil: the teardown goes on.
	PostrunRetry *hookRetry
	// Abandon: after the last failed postrun try the hook's abandon runs.
	Abandon bool
}

// event is one thing that happens to an allocation's lifecycle.
type event interface{ isEvent() }

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
	Phase   hookPhase
	Err     error
	Holding bool
	At      time.Time
}

// RetryDue says the retry timer fired.
type RetryDue struct{}

// updated says the server updated the allocation.
type updated struct {
	StopWanted  bool
	Description string // the desired description, for the kill reason
}

// taskDied says a task is dead.
type taskDied struct {
	Task           string
	Failed, Leader bool
	MainDead       bool // the main tasks are dead, a sidecar runs
}

// tasksDead says every task is dead.
type tasksDead struct{}

func (Loaded) isEvent()    {}
func (HookDone) isEvent()  {}
func (RetryDue) isEvent()  {}
func (updated) isEvent()   {}
func (taskDied) isEvent()  {}
func (tasksDead) isEvent() {}

// hookStep names one phase of one hook (an index into the hook list).
type hookStep struct {
	Hook  int
	Phase hookPhase
}

// effects is what the actor must do after a step, in this order.
type effects struct {
	StopTimer   bool          // stop the pending retry timer
	Refuse      bool          // give every task a dead state saying Description (unsafe names)
	FailTasks   bool          // mark every task not dead failed, with Description
	Status      string        // set (store and report) the client status; "" unchanged
	Description string        // the client description with Status
	Report      bool          // report the allocation to the parent
	StartTasks  bool          // spawn the task actors
	KillTasks   string        // tell every task to stop, for this reason; "" none
	Update      bool          // run the update hooks
	Run         *hookStep     // start this hook phase; HookDone when it ends
	RetryIn     time.Duration // arm the retry timer: RetryDue when it fires
	Load        bool          // read the state file (again)
	Released    bool          // tell the parent the allocation let go of everything
}

// Client descriptions the lifecycle sets.
const (
	descNoTaskGroup    = "task group not found in job"
	descStoppedEarly   = "stopped before start"
	descStoppedInSetup = "allocation stopped before its setup was done"
	descSetupFailed    = "setup failed: "
)

// lifecycle is the state machine of one allocation on the client: it
// walks the hook list forwards before the tasks start and backwards after
// they are dead, retries failed hook phases and state reads, and decides
// stops. It does no I/O and reads no clock: time comes in the events.
type lifecycle struct {
	hooks     []hookPlan
	loadRetry actors.Retry
	phase     phase
	hook      int          // the hook whose phase runs or waits
	abandon   bool         // the hook's abandon runs, not its postrun
	loadWait  bool         // a failed state read waits for RetryDue
	stop      bool         // a stop is wanted
	tries     actors.Tries // failed tries of the current hook phase, or state reads
}

// newLifecycle returns the lifecycle of an allocation with the hook list
// hooks; a failed state read is tried again after loadRetry's delay, for
// ever (starting tasks that may run is worse than waiting): its attempts
// and deadline do not count.
func newLifecycle(hooks []hookPlan, loadRetry actors.Retry) *lifecycle {
	loadRetry.Attempts, loadRetry.Deadline = 0, 0
	return &lifecycle{hooks: hooks, loadRetry: loadRetry}
}

// Phase returns the current phase.
func (l *lifecycle) Phase() phase { return l.phase }

// Hook returns the index of the hook whose phase runs or waits to retry,
// -1 in other phases.
func (l *lifecycle) Hook() int {
	switch l.phase {
	case phasePrerun, phasePrerunWait, phasePostrun, phasePostrunWait:
		return l.hook
	}
	return -1
}

// Tries returns how many tries of the current hook phase (or state reads)
// failed so far.
func (l *lifecycle) Tries() int { return l.tries.N }

// Abandoning reports whether the current hook's abandon runs.
func (l *lifecycle) Abandoning() bool { return l.abandon && l.phase == phasePostrun }

// Step takes one event and returns the effects. On error (an event the
// phase does not expect: a late worker result or timer) nothing changes.
func (l *lifecycle) Step(ev event) (effects, error) {
	next := *l
	eff, err := next.step(ev)
	if err != nil {
		return effects{}, err
	}
	*l = next
	return eff, nil
}

func (l *lifecycle) step(ev event) (effects, error) {
	switch e := ev.(type) {
	case Loaded:
		return l.onLoaded(e)
	case HookDone:
		return l.onHookDone(e)
	case RetryDue:
		return l.onRetryDue()
	case updated:
		return l.onUpdated(e), nil
	case taskDied:
		return l.onTaskDied(e), nil
	case tasksDead:
		return l.onTasksDead(), nil
	default:
		return effects{}, fmt.Errorf("%w: %T", errUnexpectedLifecycleEvent, ev)
	}
}

// become moves to a new phase if the table allows it.
func (l *lifecycle) become(to phase) error {
	if !canLifecycleTransition(l.phase, to) {
		return fmt.Errorf("%w: %s -> %s", errIllegalLifecycleTransition, l.phase, to)
	}
	l.phase = to
	return nil
}

func (l *lifecycle) unexpected(ev event) error {
	return fmt.Errorf("%w: %T in phase %s", errUnexpectedLifecycleEvent, ev, l.phase)
}
