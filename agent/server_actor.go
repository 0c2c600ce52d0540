package agent

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/actors/node"
	"github.com/troupe-dev/troupe/actors/scheduler"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// leadership says this server gained or lost raft leadership.
type leadership struct{ leader bool }

// capacityChanged asks the scheduler to retry blocked evaluations.
type capacityChanged struct{}

// serverActor ("server") owns the leader's actors: while this server leads
// it runs the scheduler and one node actor per node, rebuilt from the
// replicated state, and routes the FSM's events to them.
type serverActor struct {
	a      *Agent
	leader bool
	sched  *actor.PID
	nodes  map[string]*actor.PID
	// volumes is the volume manager (volume and controller actors).
	volumes *actor.PID
}

func newServerActor(a *Agent) actor.Producer {
	return func() actor.Actor { return &serverActor{a: a, nodes: map[string]*actor.PID{}} }
}

// Phase names the actor's state for the actor tree.
func (s *serverActor) Phase() string {
	if s.leader {
		return "leader"
	}
	return "follower"
}

// Receive dispatches.
func (s *serverActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *leadership:
		s.onLeadership(ctx, m)
	case *state.Event:
		s.onEvent(ctx, m)
	case *capacityChanged:
		if s.sched != nil {
			ctx.Send(s.sched, &scheduler.CapacityChanged{})
		}
	case *messages.ApplyRequest:
		s.onApply(ctx, m)
	case *messages.RegisterNodeRequest:
		s.onRegisterNode(ctx, m)
	case *nodeRegistered:
		s.onNodeRegistered(ctx, m)
	case *messages.NodeHeartbeat:
		s.onHeartbeat(ctx, m)
	case *node.SuspectNode:
		s.onSuspect(ctx, m)
	case *messages.UpdateAllocsRequest:
		s.onUpdateAllocs(ctx, m)
	case *messages.UpsertPluginInstances:
		s.onUpsertPlugins(ctx, m)
	case *messages.VolumeClaimRequest, *messages.VolumeNodeDetachedRequest, *messages.VolumeOpRequest:
		s.onVolumeRequest(ctx)
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting, *actor.Terminated:
	default:
		s.a.log.Warn("server actor: unexpected message", "type", fmt.Sprintf("%T", m))
	}
}

func (s *serverActor) onLeadership(ctx actor.Context, m *leadership) {
	if m.leader == s.leader {
		return
	}
	s.leader = m.leader
	if !m.leader {
		s.a.log.Info("lost leadership: stopping leader actors")
		for _, pid := range ctx.Children() {
			ctx.Stop(pid)
		}
		s.sched, s.nodes, s.volumes = nil, map[string]*actor.PID{}, nil
		return
	}
	s.a.log.Info("gained leadership: starting scheduler and node actors")
	spec := &scheduler.Spec{
		State:    func() scheduler.StateView { return s.a.store.Snapshot() },
		Proposer: s.a, Clock: s.a.clock, Logger: s.a.log.With("actor", "scheduler"),
		Seed:          uint64(s.a.clock.Now().UnixNano()),
		MaxPlacements: s.a.cfg.MaxPlacementsPerEval,
	}
	pid, err := ctx.SpawnNamed(s.a.sys.Props("scheduler", scheduler.New(spec),
		actor.WithSupervisor(actors.DefaultSupervision.Strategy())), "scheduler")
	if err != nil {
		s.a.log.Error("spawn scheduler", "error", err)
		return
	}
	s.sched = pid
	for _, n := range s.a.store.Snapshot().Nodes() {
		s.ensureNode(ctx, n.GetID())
	}
	s.startVolumes(ctx)
	s.a.suspectFailedClients() // clients gossip reported failed under the old leader
}

// onSuspect routes gossip's evidence to the node's actor (only the leader
// runs them).
func (s *serverActor) onSuspect(ctx actor.Context, m *node.SuspectNode) {
	if pid, ok := s.nodes[m.NodeID]; ok {
		ctx.Send(pid, m)
	}
}

func (s *serverActor) ensureNode(ctx actor.Context, id string) *actor.PID {
	if pid, ok := s.nodes[id]; ok {
		return pid
	}
	spec := &node.ServerSpec{
		NodeID:    id,
		State:     func() node.StateView { return s.a.store.Snapshot() },
		Proposer:  s.a,
		Clock:     s.a.clock,
		Heartbeat: s.a.heartbeatConfig(),
		ClientPID: s.a.clientPIDFor,
		Servers:   s.a.serverRPCAddrs,
		Leader:    s.a.leaderRPCAddr,
		Logger:    s.a.log.With("actor", "node"),
	}
	pid, err := ctx.SpawnNamed(s.a.sys.Props("node", node.NewServer(spec)), "nodes/"+id)
	if err != nil {
		s.a.log.Error("spawn node actor", "node", id, "error", err)
		return nil
	}
	s.nodes[id] = pid
	return pid
}

// onEvent routes what the FSM applied to the leader's actors.
func (s *serverActor) onEvent(ctx actor.Context, ev *state.Event) {
	if !s.leader {
		return
	}
	for _, id := range ev.NodeUpdated {
		if pid := s.ensureNode(ctx, id); pid != nil {
			ctx.Send(pid, &node.NodeUpdated{})
		}
	}
	for _, id := range ev.NodesChanged {
		if pid := s.ensureNode(ctx, id); pid != nil {
			ctx.Send(pid, &messages.NodeAllocsChanged{NodeID: id, Index: ev.Index})
		}
	}
	for _, id := range ev.EvalsReady {
		ctx.Send(s.sched, &messages.EvalReady{EvalID: id})
	}
	for _, e := range ev.DelayedEvals {
		ctx.Send(s.sched, &messages.EvalReady{EvalID: e.GetID()})
	}
	if len(ev.NodeUpdated) > 0 {
		ctx.Send(s.sched, &scheduler.CapacityChanged{})
	}
	if ev.SchedulerConfigChanged {
		ctx.Send(s.sched, &scheduler.ConfigChanged{})
	}
	// A freed claim or a plugin instance coming up may unblock the
	// evaluations that failed on that volume or plugin.
	if len(ev.VolumesChanged)+len(ev.PluginsChanged) > 0 {
		ctx.Send(s.sched, &scheduler.CSIChanged{Volumes: ev.VolumesChanged, Plugins: ev.PluginsChanged})
	}
	if s.volumes != nil && (len(ev.VolumesChanged)+len(ev.PluginsChanged)+len(ev.NodeUpdated)+len(ev.AllocsStopped) > 0) {
		ctx.Send(s.volumes, ev)
	}
}

// heartbeatConfig is the node status machine's configuration.
func (a *Agent) heartbeatConfig() node.HeartbeatConfig {
	c := node.DefaultHeartbeatConfig()
	c.MinTTL, c.Grace = a.cfg.HeartbeatTTL, a.cfg.HeartbeatGrace
	if a.cfg.MaxHeartbeatsPerSecond > 0 {
		c.MaxHeartbeatsPerSecond = a.cfg.MaxHeartbeatsPerSecond
	}
	c.FailoverTTL = 6 * a.cfg.HeartbeatTTL
	return c
}
