package alloc

import "fmt"

// Phase is a task actor's state.
type Phase int

// Task phases.
const (
	PhasePending Phase = iota
	PhaseStarting
	PhaseRecovering
	PhaseRunning
	PhaseRestarting
	PhaseStopping
	PhaseDead
)

var phaseNames = [...]string{"pending", "starting", "recovering", "running", "restarting", "stopping", "dead"}

func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// transitions is the whole table of legal task phase changes.
var transitions = map[Phase][]Phase{
	PhasePending:    {PhaseStarting, PhaseRecovering, PhaseDead},
	PhaseStarting:   {PhaseRunning, PhaseRestarting, PhaseStopping, PhaseDead},
	PhaseRecovering: {PhaseRunning, PhaseStarting, PhaseStopping, PhaseDead},
	PhaseRunning:    {PhaseStopping, PhaseRestarting, PhaseDead},
	PhaseRestarting: {PhaseStarting, PhaseDead},
	PhaseStopping:   {PhaseDead},
	PhaseDead:       {},
}

// CanTransition reports whether from -> to is legal.
func CanTransition(from, to Phase) bool {
	for _, p := range transitions[from] {
		if p == to {
			return true
		}
	}
	return false
}
