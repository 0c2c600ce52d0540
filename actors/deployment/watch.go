package deployment

import (
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// Input is what Step decides from: the deployment as stored, the latest
// stable job version older than the deployment's (nil: none), the
// deployment's own job version, how many canaries of each group are
// healthy, and each group's healthy count at the previous Step (nil: a
// new actor's first step, which asks for an evaluation when any group has
// healthy allocations, in case the last leader's was lost).
type Input struct {
	Deployment     *messages.Deployment
	Job            *messages.Job
	Stable         *messages.Job
	HealthyCanary  map[string]int
	PreviousHealth map[string]int32
	Now            time.Time
}

// Effects are what Step asks the actor to do. Status "" changes nothing.
type Effects struct {
	Status      string
	Description string
	// Revert is the job to register with the failure (auto-revert).
	Revert *messages.Job
	// Promote promotes every group's canaries.
	Promote bool
	// Eval asks for an evaluation, for the scheduler's next batch.
	Eval bool
	// WakeAt is when to step again (the soonest progress deadline; zero:
	// no timer).
	WakeAt time.Time
}

// done reports whether a group has all it wants.
func done(s *messages.DeploymentState) bool {
	return s.HealthyAllocs >= s.DesiredTotal && (s.DesiredCanaries == 0 || s.Promoted)
}

// awaitingPromotion reports whether a group's canaries are all healthy and
// wait for their promotion.
func awaitingPromotion(s *messages.DeploymentState, healthyCanaries int) bool {
	return s.DesiredCanaries > 0 && !s.Promoted && healthyCanaries >= int(s.DesiredCanaries)
}

// Step decides what a running deployment needs now.
func Step(in Input) Effects {
	d := in.Deployment
	if d.GetStatus() != messages.DeploymentStatusRunning {
		return Effects{}
	}
	var eff Effects
	if base, revert := failure(in); base != "" {
		return fail(in, base, revert)
	}
	allDone, needsPromo, autoPromo := true, false, true
	for name, s := range d.TaskGroups {
		if s.HealthyAllocs > in.PreviousHealth[name] {
			eff.Eval = true
		}
		if !done(s) {
			allDone = false
		}
		if s.DesiredCanaries > 0 && !s.Promoted {
			if !awaitingPromotion(s, in.HealthyCanary[name]) || !s.AutoPromote {
				autoPromo = false
			}
			if awaitingPromotion(s, in.HealthyCanary[name]) && !s.AutoPromote {
				needsPromo = true
			}
		}
		if by := s.RequireProgressBy; by > 0 && !done(s) && !awaitingPromotion(s, in.HealthyCanary[name]) {
			if at := time.Unix(0, by); eff.WakeAt.IsZero() || at.Before(eff.WakeAt) {
				eff.WakeAt = at
			}
		}
	}
	switch {
	case allDone && d.IsMultiregion:
		// A region of a multiregion rollout waits for its peers
		// (multiregion.go); the evaluation stops the old allocations.
		return Effects{Status: messages.DeploymentStatusBlocked, Description: messages.DeploymentDescBlocked, Eval: true}
	case allDone:
		// The evaluation stops the old allocations of the last batch.
		return Effects{Status: messages.DeploymentStatusSuccessful, Description: messages.DeploymentDescSuccessful, Eval: true}
	case hasUnpromoted(d) && autoPromo:
		eff.Promote, eff.Eval = true, false
	case needsPromo && d.StatusDescription != messages.DeploymentDescRunningNeedsPromo:
		eff.Status, eff.Description = messages.DeploymentStatusRunning, messages.DeploymentDescRunningNeedsPromo
	}
	return eff
}

func hasUnpromoted(d *messages.Deployment) bool {
	for _, s := range d.TaskGroups {
		if s.DesiredCanaries > 0 && !s.Promoted {
			return true
		}
	}
	return false
}

// failure is why the deployment fails now ("" : it does not), and
// whether a failed group asks for auto-revert.
func failure(in Input) (string, bool) {
	base, revert := "", false
	for name, s := range in.Deployment.TaskGroups {
		why := ""
		switch {
		case s.UnhealthyAllocs > 0:
			why = messages.DeploymentDescFailedAllocations
		case s.RequireProgressBy > 0 && !done(s) && !awaitingPromotion(s, in.HealthyCanary[name]) &&
			in.Now.After(time.Unix(0, s.RequireProgressBy)):
			why = messages.DeploymentDescProgressDeadline
		}
		if why == "" {
			continue
		}
		if base == "" || why == messages.DeploymentDescFailedAllocations {
			base = why
		}
		revert = revert || s.AutoRevert
	}
	return base, revert
}

func fail(in Input, base string, revert bool) Effects {
	eff := Effects{Status: messages.DeploymentStatusFailed, Description: base}
	if !revert {
		return eff
	}
	switch {
	case in.Stable == nil:
		eff.Description = messages.DeploymentDescNoRollbackTarget(base)
	case specEqual(in.Stable, in.Job):
		eff.Description = messages.DeploymentDescRollbackNoop(base, in.Stable.Version)
	default:
		eff.Description = messages.DeploymentDescRollback(base, in.Stable.Version)
		eff.Revert = RevertJob(in.Stable)
	}
	return eff
}

// RevertJob is the job to register to go back to version v: v's spec,
// which the FSM stores as a new version.
func RevertJob(v *messages.Job) *messages.Job {
	j := proto.Clone(v).(*messages.Job)
	messages.ClearServerFields(j)
	return j
}

func specEqual(a, b *messages.Job) bool {
	if a == nil || b == nil {
		return a == b
	}
	ca, cb := proto.Clone(a).(*messages.Job), proto.Clone(b).(*messages.Job)
	messages.ClearServerFields(ca)
	messages.ClearServerFields(cb)
	return proto.Equal(ca, cb)
}
