package server

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors/server/periodic"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// startPeriodic spawns the periodic dispatcher ("server/periodic").
func (s *Actor) startPeriodic(ctx actor.Context) {
	sp := s.spec
	spec := &periodic.Spec{
		State:    func() periodic.View { return periodicView(sp.State()) },
		Proposer: sp.Proposer, Clock: sp.Clock, Logger: sp.Logger.With("actor", "periodic"),
	}
	pid, err := ctx.SpawnNamed(sp.props("periodic", periodic.New(spec)), "periodic")
	if err != nil {
		s.log.Error("spawn periodic dispatcher", "error", err)
		return
	}
	s.periodic = pid
}

// toPeriodic tells the dispatcher which jobs changed.
func (s *Actor) toPeriodic(ctx actor.Context, ev *state.Event) {
	if s.periodic != nil && len(ev.JobsChanged) > 0 {
		ctx.Send(s.periodic, &periodic.JobsChanged{Keys: ev.JobsChanged})
	}
}

// periodicView is the state as the dispatcher reads it; a view without
// periodic jobs (a test's) has none.
func periodicView(v StateView) periodic.View {
	if pv, ok := v.(periodic.View); ok {
		return pv
	}
	return noPeriodic{}
}

type noPeriodic struct{}

func (noPeriodic) JobByID(string, string) *messages.Job                   { return nil }
func (noPeriodic) PeriodicJobs() []*messages.Job                          { return nil }
func (noPeriodic) PeriodicLaunch(string, string) *messages.PeriodicLaunch { return nil }
func (noPeriodic) ChildJobs(string, string) []*messages.Job               { return nil }
