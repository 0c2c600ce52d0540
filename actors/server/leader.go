package server

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/actors/node"
	"github.com/troupe-dev/troupe/actors/scheduler"
	"github.com/troupe-dev/troupe/actors/volume"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// controllerRPCTimeout bounds a controller RPC on the leader: longer than
// the client's bound on the plugin call (node.ClientSpec, 2 min), so a slow
// attach is never taken for an unreachable instance and sent again while
// it still runs.
const controllerRPCTimeout = 150 * time.Second

func (s *Actor) onLeadership(ctx actor.Context, m *Leadership) {
	if m.Leader == s.leader {
		return
	}
	s.leader = m.Leader
	if !m.Leader {
		s.log.Info("lost leadership: stopping leader actors")
		for _, pid := range ctx.Children() {
			ctx.Stop(pid)
		}
		s.sched, s.nodes, s.volumes, s.periodic, s.deploys = nil, map[string]*actor.PID{}, nil, nil, nil
		return
	}
	s.log.Info("gained leadership: starting scheduler and node actors")
	if !s.startScheduler(ctx) {
		return
	}
	for _, n := range s.spec.State().Nodes() {
		s.ensureNode(ctx, n.GetID())
	}
	s.startVolumes(ctx)
	s.startGC(ctx)
	s.startPeriodic(ctx)
	s.startDeployments(ctx)
	s.spec.GainedLeadership()
}

func (s *Actor) startScheduler(ctx actor.Context) bool {
	sp := s.spec
	spec := &scheduler.Spec{
		State:    func() scheduler.StateView { return sp.State() },
		Proposer: sp.Proposer, Clock: sp.Clock, Logger: sp.Logger.With("actor", "scheduler"),
		Seed:          uint64(sp.Clock.Now().UnixNano()),
		MaxPlacements: sp.MaxPlacements,
		Stats:         sp.SchedulerStats,
	}
	pid, err := ctx.SpawnNamed(sp.props("scheduler", scheduler.New(spec),
		actor.WithSupervisor(actors.DefaultSupervision.Strategy())), "scheduler")
	if err != nil {
		s.log.Error("spawn scheduler", "error", err)
		return false
	}
	s.sched = pid
	return true
}

// ensureNode is the node's actor, spawned when it is not running yet.
func (s *Actor) ensureNode(ctx actor.Context, id string) *actor.PID {
	if pid, ok := s.nodes[id]; ok {
		return pid
	}
	sp := s.spec
	spec := &node.ServerSpec{
		NodeID:    id,
		State:     func() node.StateView { return sp.State() },
		Proposer:  sp.Proposer,
		Clock:     sp.Clock,
		Heartbeat: sp.Heartbeat,
		ClientPID: func(n *messages.Node) *actor.PID { pid, _ := sp.Clients.ClientPID(n); return pid },
		Servers:   sp.Servers,
		Leader:    sp.Leader,
		Logger:    sp.Logger.With("actor", "node"),
	}
	pid, err := ctx.SpawnNamed(sp.props("node", node.NewServer(spec)), "nodes/"+id)
	if err != nil {
		s.log.Error("spawn node actor", "node", id, "error", err)
		return nil
	}
	s.nodes[id] = pid
	return pid
}

// dropNode stops the actor of a node the garbage collector removed and
// forgets it (its registry entry goes when it stops); a node that
// registers again gets a new one.
func (s *Actor) dropNode(ctx actor.Context, id string) {
	pid, ok := s.nodes[id]
	if !ok {
		return
	}
	delete(s.nodes, id)
	ctx.Stop(pid)
}

// startVolumes spawns the leader's volume manager (server/volumes): the
// volume actors and the controller actors, rebuilt from the replicated
// state.
func (s *Actor) startVolumes(ctx actor.Context) {
	sp := s.spec
	spec := &volume.ManagerSpec{
		State:       func() volume.StateView { return sp.State() },
		Proposer:    sp.Proposer,
		Controllers: &controllerRPC{state: sp.State, clients: sp.Clients, root: ctx.ActorSystem().Root},
		Clock:       sp.Clock,
		Retry:       sp.VolumeRetry,
		Registry:    sp.Registry,
		Logger:      sp.Logger.With("actor", "volumes"),
		// Longer than a client's own bound on the plugin call, so the
		// leader gives up only on a client that does not answer at all.
		RPCTimeout: controllerRPCTimeout,
	}
	pid, err := ctx.SpawnNamed(sp.props("volumes", volume.NewManager(spec),
		actor.WithSupervisor(actors.DefaultSupervision.Strategy())), "volumes")
	if err != nil {
		s.log.Error("spawn volume manager", "error", err)
		return
	}
	s.volumes = pid
}

// startGC spawns the leader's garbage collector (server/gc).
func (s *Actor) startGC(ctx actor.Context) {
	if _, err := ctx.SpawnNamed(s.spec.props("gc", newGC(s.spec)), "gc"); err != nil {
		s.log.Error("spawn garbage collector", "error", err)
	}
}

// onSuspect routes evidence that a node is gone to the node's actor
// (only the leader runs them).
func (s *Actor) onSuspect(ctx actor.Context, m *node.SuspectNode) {
	if pid, ok := s.nodes[m.NodeID]; ok {
		ctx.Send(pid, m)
	}
}

// onEvent routes what the FSM applied to the leader's actors.
func (s *Actor) onEvent(ctx actor.Context, ev *state.Event) {
	if !s.leader {
		return
	}
	for _, id := range ev.NodesDeleted {
		s.dropNode(ctx, id)
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
	s.toScheduler(ctx, ev)
	s.toPeriodic(ctx, ev)
	s.toDeployments(ctx, ev)
	if s.volumes != nil && (len(ev.VolumesChanged)+len(ev.PluginsChanged)+len(ev.NodeUpdated)+len(ev.NodesDeleted)+len(ev.AllocsStopped) > 0) {
		ctx.Send(s.volumes, ev)
	}
}

// toScheduler tells the scheduler what in ev concerns it.
func (s *Actor) toScheduler(ctx actor.Context, ev *state.Event) {
	if s.sched == nil {
		return
	}
	for _, id := range ev.EvalsReady {
		ctx.Send(s.sched, &messages.EvalReady{EvalID: id})
	}
	for _, e := range ev.DelayedEvals {
		ctx.Send(s.sched, &messages.EvalReady{EvalID: e.GetID()})
	}
	if len(ev.EvalsEnded) > 0 {
		ctx.Send(s.sched, &scheduler.EvalsEnded{IDs: ev.EvalsEnded})
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
}
