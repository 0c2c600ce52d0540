package alloc

import "fmt"

// taskPhase is a task actor's state (the allocation's own is Phase, in
// lifecycle.go).
type taskPhase int

// Task phases.
const (
	taskPhasePending taskPhase = iota
	taskPhaseStarting
	taskPhaseRecovering
	taskPhaseRunning
	taskPhaseRestarting
	taskPhaseStopping
	taskPhaseDead
)

var taskPhaseNames = [...]string{"pending", "starting", "recovering", "running", "restarting", "stopping", "dead"}

// String names the phase for the actor tree and the logs.
func (p taskPhase) String() string {
	if int(p) < len(taskPhaseNames) {
		return taskPhaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// taskTransitions is the whole table of legal task phase changes.
var taskTransitions = map[taskPhase][]taskPhase{
	taskPhasePending:    {taskPhaseStarting, taskPhaseRecovering, taskPhaseDead},
	taskPhaseStarting:   {taskPhaseRunning, taskPhaseRestarting, taskPhaseStopping, taskPhaseDead},
	taskPhaseRecovering: {taskPhaseRunning, taskPhaseStarting, taskPhaseStopping, taskPhaseDead},
	taskPhaseRunning:    {taskPhaseStopping, taskPhaseRestarting, taskPhaseDead},
	taskPhaseRestarting: {taskPhaseStarting, taskPhaseRunning, taskPhaseDead}, // running: an operator's restart whose stop failed
	taskPhaseStopping:   {taskPhaseDead},
	taskPhaseDead:       {taskPhaseStarting}, // an operator's restart of all tasks (restartAll)
}

// canTaskTransition reports whether from -> to is legal.
func canTaskTransition(from, to taskPhase) bool {
	for _, p := range taskTransitions[from] {
		if p == to {
			return true
		}
	}
	return false
}
