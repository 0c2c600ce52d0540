package server

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors/deployment"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// deploymentState is the state as the deployment actors read it; a view
// without deployments (a test's) has none.
type deploymentState interface {
	deployment.View
	ActiveDeployments() []*messages.Deployment
}

func (s *Actor) deploymentView() deploymentState {
	if v, ok := s.spec.State().(deploymentState); ok {
		return v
	}
	return nil
}

// startDeployments spawns an actor per active deployment
// ("server/deployments/<id>"), rebuilt from raft.
func (s *Actor) startDeployments(ctx actor.Context) {
	s.deploys = map[string]*actor.PID{}
	v := s.deploymentView()
	if v == nil {
		return
	}
	for _, d := range v.ActiveDeployments() {
		s.ensureDeployment(ctx, d.ID)
	}
}

func (s *Actor) ensureDeployment(ctx actor.Context, id string) *actor.PID {
	if pid, ok := s.deploys[id]; ok {
		return pid
	}
	sp := s.spec
	spec := &deployment.Spec{
		ID:       id,
		State:    func() deployment.View { return s.deploymentViewOf(sp) },
		Proposer: sp.Proposer, Clock: sp.Clock, Logger: sp.Logger.With("actor", "deployment"),
	}
	pid, err := ctx.SpawnNamed(sp.props("deployment", deployment.New(spec)), "deployments/"+id)
	if err != nil {
		s.log.Error("spawn deployment actor", "deployment", id, "error", err)
		return nil
	}
	s.deploys[id] = pid
	return pid
}

func (s *Actor) deploymentViewOf(sp *Spec) deployment.View {
	v, _ := sp.State().(deploymentState)
	return v
}

// toDeployments tells each changed deployment's actor, starting the
// actors of new active ones and forgetting finished ones.
func (s *Actor) toDeployments(ctx actor.Context, ev *state.Event) {
	if s.deploys == nil || len(ev.DeploymentsChanged) == 0 {
		return
	}
	v := s.deploymentView()
	if v == nil {
		return
	}
	for _, id := range ev.DeploymentsChanged {
		d := v.DeploymentByID(id)
		if d == nil || !d.Active() {
			if pid, ok := s.deploys[id]; ok {
				ctx.Send(pid, &deployment.Changed{}) // it stops itself
				delete(s.deploys, id)
			}
			continue
		}
		if pid := s.ensureDeployment(ctx, id); pid != nil {
			ctx.Send(pid, &deployment.Changed{})
		}
	}
}
