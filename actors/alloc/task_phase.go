package alloc

import "fmt"

// TaskPhase is a task actor's state (the allocation's own is Phase, in
// lifecycle.go).
type TaskPhase int

// Task phases.
const (
	TaskPhasePending TaskPhase = iota
	TaskPhaseStarting
	TaskPhaseRecovering
	TaskPhaseRunning
	TaskPhaseRestarting
	TaskPhaseStopping
	TaskPhaseDead
)

var taskPhaseNames = [...]string{"pending", "starting", "recovering", "running", "restarting", "stopping", "dead"}

// String names the phase for the actor tree and the logs.
func (p TaskPhase) String() string {
	if int(p) < len(taskPhaseNames) {
		return taskPhaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// taskTransitions is the whole table of legal task phase changes.
var taskTransitions = map[TaskPhase][]TaskPhase{
	TaskPhasePending:    {TaskPhaseStarting, TaskPhaseRecovering, TaskPhaseDead},
	TaskPhaseStarting:   {TaskPhaseRunning, TaskPhaseRestarting, TaskPhaseStopping, TaskPhaseDead},
	TaskPhaseRecovering: {TaskPhaseRunning, TaskPhaseStarting, TaskPhaseStopping, TaskPhaseDead},
	TaskPhaseRunning:    {TaskPhaseStopping, TaskPhaseRestarting, TaskPhaseDead},
	TaskPhaseRestarting: {TaskPhaseStarting, TaskPhaseDead},
	TaskPhaseStopping:   {TaskPhaseDead},
	TaskPhaseDead:       {},
}

// CanTaskTransition reports whether from -> to is legal.
func CanTaskTransition(from, to TaskPhase) bool {
	for _, p := range taskTransitions[from] {
		if p == to {
			return true
		}
	}
	return false
}
