package server

import (
	"fmt"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/actors/node"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// Leadership says this server gained or lost raft leadership. Send it
// once the state holds every committed entry (after a raft barrier).
type Leadership struct{ Leader bool }

// Actor is a server's top actor ("server"). It answers the RPCs clients
// and peers send to a server (rpc.go) and, while this server leads, runs
// the leader's actors: the scheduler, one node actor per node and the
// volume manager, rebuilt from the replicated state (leader.go), routing
// the FSM's events to them.
type Actor struct {
	actors.Lifetime
	spec   *Spec
	log    *slog.Logger
	leader bool
	sched  *actor.PID
	nodes  map[string]*actor.PID
	// volumes is the volume manager (volume and controller actors).
	volumes *actor.PID
	// periodic launches periodic jobs' children (periodic.Dispatcher).
	periodic *actor.PID
	// deploys are the deployment actors, by deployment ID (deployments.go).
	deploys map[string]*actor.PID
}

// New returns a producer for the server actor.
func New(spec *Spec) actor.Producer {
	sp := spec.withDefaults()
	return func() actor.Actor {
		return &Actor{spec: sp, log: sp.Logger, nodes: map[string]*actor.PID{}}
	}
}

// Phase names the actor's state for the actor tree.
func (s *Actor) Phase() string {
	if s.leader {
		return "leader"
	}
	return "follower"
}

// Receive dispatches.
func (s *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *Leadership:
		s.onLeadership(ctx, m)
	case *state.Event:
		s.onEvent(ctx, m)
	case *node.SuspectNode:
		s.onSuspect(ctx, m)
	case *messages.ApplyRequest:
		s.onApply(ctx, m)
	case *messages.RegisterNodeRequest:
		s.onRegisterNode(ctx, m)
	case *nodeRegistered:
		s.onNodeRegistered(ctx, m)
	case *messages.NodeHeartbeat:
		s.onHeartbeat(ctx, m)
	case *messages.UpdateAllocsRequest:
		s.onUpdateAllocs(ctx, m)
	case *allocsUpdated:
		s.onAllocsUpdated(ctx, m)
	case *messages.UpsertPluginInstances:
		s.onUpsertPlugins(ctx, m)
	case *messages.VolumeClaimRequest:
		s.onVolumeClaim(ctx, m)
	case *messages.VolumeNodeDetachedRequest:
		s.onVolumeNodeDetached(ctx, m)
	case *messages.VolumeOpRequest:
		s.onVolumeRequest(ctx)
	case *messages.VarReadRequest:
		s.onVarRead(ctx, m)
	case *messages.ResolveACLTokenRequest:
		s.onResolveACLToken(ctx, m)
	case *messages.ResolveWorkloadIdentityRequest:
		s.onResolveWorkloadIdentity(ctx, m)
	case *messages.SignIdentitiesRequest:
		s.onSignIdentities(ctx, m)
	case *messages.IdentityVarReadRequest:
		s.onIdentityVarRead(ctx, m)
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting, *actor.Terminated:
	default:
		s.log.Warn("server actor: unexpected message", "type", fmt.Sprintf("%T", m))
	}
}
