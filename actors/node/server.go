package node

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/actors/server/evals"
	"github.com/troupe-dev/troupe/messages"
)

// StateView is the part of the replicated state a server-side node actor
// reads (the state store's snapshot implements it).
type StateView interface {
	NodeByID(id string) *messages.Node
	// LiveNodes is how many nodes are not down (the TTLs scale with it),
	// in O(1): it is read on every heartbeat.
	LiveNodes() int
	AllocsByNode(nodeID string) []*messages.Allocation
	// DisconnectWindow is the longest disconnect window of the node's
	// allocations that are meant to run and not over on the client, kept
	// by the state store as allocations change (not walked per change).
	DisconnectWindow(nodeID string) time.Duration
	JobVersion(namespace, id string, version uint64) *messages.Job
	JobByID(namespace, id string) *messages.Job
	EvalsByJob(namespace, id string) []*messages.Evaluation
	Index(tables ...string) uint64
}

// Proposer commits a raft command through the leader.
type Proposer interface {
	Apply(ctx context.Context, cmd *messages.Command) (any, uint64, error)
}

// ServerSpec is everything a server-side node actor needs.
type ServerSpec struct {
	NodeID   string
	State    func() StateView
	Proposer Proposer
	Clock    actors.Clock
	// Heartbeat sets the TTLs handed to the client and the grace after them.
	Heartbeat HeartbeatConfig
	// ClientPID says where the node's client actor lives; nil when the node
	// has no client to push to.
	ClientPID func(n *messages.Node) *actor.PID
	// Servers and Leader tell clients where the servers are.
	Servers func() []string
	Leader  func() string
	// Probe sets how evidence that the node is gone is checked (zero:
	// defaultProbeConfig); see SuspectNode.
	Probe  ProbeConfig
	Logger *slog.Logger
}

// RegisterDone tells the node actor that its node's registration is
// committed; it answers the client (the message's sender) with the TTL.
type RegisterDone struct{ Index uint64 }

// Worker results and timers.
type (
	statusTick      struct{}
	statusCommitted struct {
		status string
		eff    effects
		err    error
	}
	// retryCommit commits a status change again after a failure.
	retryCommit struct{ eff effects }
)

// server is the leader's actor for one node ("server/nodes/<id>"): it
// tracks the node's heartbeats with the status machine (nodeStatus),
// commits status changes with evaluations for the node's jobs, and pushes
// the node's allocations to its client.
type server struct {
	actors.Lifetime // ends the workers on stop
	spec            *ServerSpec
	status          *nodeStatus
	timer           actors.Timer
	drainTimer      actors.Timer
	pushed          uint64
	windowFed       bool         // the status machine has a disconnect window (window)
	suspect         *suspicion   // checks evidence other than heartbeats (server_probe.go)
	probeTimer      actors.Timer // the probe's retry delay or timeout
	// commitRetry paces the commits of a status change that failed.
	commitRetry *actors.Retrier
	log         *slog.Logger
}

// statusCommitRetry is the backoff of a node status change that did not
// commit (the leader is busy or losing its quorum): 1 s doubling to 30 s,
// given up after 24 h (a new leader derives the status again).
var statusCommitRetry = actors.Retry{Initial: time.Second, Max: 30 * time.Second, Multiplier: 2, Deadline: 24 * time.Hour}

// NewServer returns a producer for a server-side node actor.
func NewServer(spec *ServerSpec) actor.Producer {
	return func() actor.Actor {
		return &server{spec: spec, commitRetry: statusCommitRetry.On(spec.Clock), log: spec.Logger.With("node", spec.NodeID)}
	}
}

// Phase names the actor's state for the actor tree.
func (s *server) Phase() string {
	if s.status == nil {
		return "starting"
	}
	return s.status.Status().String()
}

// Receive dispatches.
func (s *server) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		s.onStarted(ctx)
	case *messages.NodeAllocsChanged:
		s.onAllocsChanged(ctx, m)
	case *RegisterDone:
		s.onAlive(ctx, Registered{At: s.spec.Clock.Now(), Nodes: s.nodes()}, m.Index)
		s.pushed = 0
		s.push(ctx, 0, s.spec.State()) // a (re)registered client learns its allocations at once
	case *messages.NodeHeartbeat:
		s.onAlive(ctx, heartbeat{At: s.spec.Clock.Now(), Nodes: s.nodes()}, 0)
		if m.GetAllocsIndex() < s.pushed {
			s.push(ctx, 0, s.spec.State()) // the client missed a push
		}
	case *statusTick:
		s.step(ctx, Tick{At: s.spec.Clock.Now()})
	case *statusCommitted:
		s.onCommitted(ctx, m)
	case *retryCommit:
		s.onRetryCommit(ctx, m)
	case *drainTick:
		s.onDrainTick(ctx)
	case *NodeUpdated:
		s.drain(ctx, s.spec.State())
	case *SuspectNode:
		s.onSuspect(ctx, m)
	case *nodeProbeNow:
		s.onProbeNow(ctx, m)
	case *nodeProbeResult:
		s.onProbeResult(ctx, m)
	case *actor.Stopping:
		for _, t := range []actors.Timer{s.timer, s.drainTimer, s.probeTimer} {
			if t != nil {
				t.Stop()
			}
		}
	case *actor.Stopped, *actor.Restarting, *actor.Terminated:
	default:
		s.log.Warn("node actor: unexpected message", "type", fmt.Sprintf("%T", m))
	}
}

// onStarted rebuilds the status machine from the replicated state: a new
// leader gives every node a failover TTL before it may count as missed.
func (s *server) onStarted(ctx actor.Context) {
	view := s.spec.State()
	n := view.NodeByID(s.spec.NodeID)
	s.status = newNodeStatus(s.spec.Heartbeat, n.GetStatus())
	s.windowFed = false
	s.window(ctx, view)
	s.step(ctx, Tick{At: s.spec.Clock.Now()})
	s.push(ctx, 0, view)
	s.drain(ctx, view)
}

// nodes is the cluster size the TTL scales with. It is read per
// heartbeat, so it must not walk the nodes (the state store counts them).
func (s *server) nodes() int { return s.spec.State().LiveNodes() }

func (s *server) onAllocsChanged(ctx actor.Context, m *messages.NodeAllocsChanged) {
	view := s.spec.State() // one snapshot for the three: each is a memdb read transaction
	s.window(ctx, view)
	s.push(ctx, m.GetIndex(), view)
	s.drain(ctx, view)
}

// NodeUpdated tells the node actor its node record changed (a drain
// started, eligibility changed).
type NodeUpdated struct{}

// window feeds the longest disconnect window of the node's allocations to
// the status machine.
// A window the machine has already changes nothing (the timer would be
// re-armed at the same deadline), so most placements on a node feed none.
func (s *server) window(ctx actor.Context, view StateView) {
	w := view.DisconnectWindow(s.spec.NodeID)
	if s.windowFed && w == s.status.window {
		return
	}
	s.windowFed = true
	s.step(ctx, clientDisconnectWindow{Window: w})
}

// onAlive handles a registration or heartbeat and answers the client.
func (s *server) onAlive(ctx actor.Context, in input, index uint64) {
	was := s.status.Status()
	eff := s.step(ctx, in)
	s.suspectStep(ctx, alive{At: s.spec.Clock.Now()}) // a probe round in flight ends: the node lives
	// Back from disconnected or down: the servers marked the node's
	// allocations, so the client reports them all again.
	resend := (was == statusDisconnected || was == statusDown) && s.status.Status() == statusReady
	ttl := int64(eff.TTL)
	servers, leader := s.spec.Servers(), s.spec.Leader()
	if _, ok := in.(Registered); ok {
		ctx.Respond(&messages.RegisterNodeResponse{Index: index, HeartbeatTTL: ttl, Servers: servers, LeaderRPCAddr: leader})
		return
	}
	ctx.Respond(&messages.NodeHeartbeatResponse{HeartbeatTTL: ttl, Servers: servers, LeaderRPCAddr: leader, ResendAllocs: resend})
}

// step runs the status machine and carries out its effects.
func (s *server) step(ctx actor.Context, in input) effects {
	eff, err := s.status.Step(in)
	if err != nil {
		s.log.Error("node status", "input", fmt.Sprintf("%T", in), "error", err)
		return eff
	}
	if !eff.ArmTimerAt.IsZero() {
		if s.timer != nil {
			s.timer.Stop()
		}
		self, root := ctx.Self(), ctx.ActorSystem().Root
		d := max(eff.ArmTimerAt.Sub(s.spec.Clock.Now()), 0)
		s.timer = s.spec.Clock.AfterFunc(d, func() { root.Send(self, &statusTick{}) })
	}
	if eff.NewStatus != "" {
		s.log.Info("node status changed", "status", eff.NewStatus, "reason", eff.StatusDescription)
		s.commit(ctx, eff)
	}
	return eff
}

// commit records the new status with an evaluation for every job that has
// allocations on the node, so the scheduler marks them lost, replaces them
// or reconciles them.
func (s *server) commit(ctx actor.Context, eff effects) {
	view := s.spec.State()
	now := s.spec.Clock.Now().UnixNano()
	up := &messages.UpdateNodeStatus{NodeID: s.spec.NodeID, Status: eff.NewStatus, StatusDescription: eff.StatusDescription,
		Evals: evals.ForNodeStatus(view, s.spec.NodeID, s.spec.Clock.Now())}
	cmds := []*messages.Command{{Time: now, Cmd: &messages.Command_UpdateNodeStatus{UpdateNodeStatus: up}}}
	if eff.MarkAllocsUnknown {
		// The node is cut off: its allocations may still run, but nobody
		// knows; the client's next report (after it reconnects) says again.
		unknown := &messages.UpdateAllocsFromClient{}
		for _, a := range view.AllocsByNode(s.spec.NodeID) {
			if !a.ClientTerminalStatus() && a.GetDesiredStatus() == messages.AllocDesiredStatusRun {
				unknown.Allocs = append(unknown.Allocs, &messages.Allocation{ID: a.GetID(), ClientStatus: messages.AllocClientStatusUnknown,
					ClientDescription: "node " + s.spec.NodeID + " is disconnected", ModifyTime: now})
			}
		}
		cmds = append(cmds, &messages.Command{Time: now, Cmd: &messages.Command_UpdateAllocsFromClient{UpdateAllocsFromClient: unknown}})
	}
	prop, status := s.spec.Proposer, eff.NewStatus
	actors.Go(ctx, func(life context.Context) any {
		c, cancel := context.WithTimeout(life, 30*time.Second)
		defer cancel()
		for _, cmd := range cmds {
			if _, _, err := prop.Apply(c, cmd); err != nil {
				return &statusCommitted{status: status, eff: eff, err: err}
			}
		}
		return &statusCommitted{status: status, eff: eff}
	})
}

// onCommitted retries a status change that did not commit, as long as the
// status machine still holds that status (a later change supersedes it).
func (s *server) onCommitted(ctx actor.Context, m *statusCommitted) {
	if m.err == nil {
		s.commitRetry.Reset()
		return
	}
	d, ok := s.commitRetry.Next()
	if !ok {
		s.log.Error("committing node status failed, giving up", "status", m.status, "error", m.err, "attempts", s.commitRetry.Tries())
		s.commitRetry.Reset()
		return
	}
	s.log.Error("committing node status failed, retrying", "status", m.status, "error", m.err, "in", d)
	self, root := ctx.Self(), ctx.ActorSystem().Root
	s.spec.Clock.AfterFunc(d, func() { root.Send(self, &retryCommit{eff: m.eff}) })
}

func (s *server) onRetryCommit(ctx actor.Context, m *retryCommit) {
	if s.status.Status().String() == m.eff.NewStatus {
		s.commit(ctx, m.eff)
		return
	}
	s.commitRetry.Reset() // superseded by a later change
}

// push sends the client the full set of allocations it must know about:
// every one it should run or still has to stop. Terminal ones are left out,
// which tells the client it may forget them.
func (s *server) push(ctx actor.Context, index uint64, view StateView) {
	if index != 0 && index <= s.pushed {
		return
	}
	// Stamp the set with the allocations table's index: it grows across
	// leaders, so the client can drop a late set from an old leader.
	index = view.Index("allocs")
	n := view.NodeByID(s.spec.NodeID)
	if n == nil {
		return
	}
	to := s.spec.ClientPID(n)
	if to == nil {
		return
	}
	out := &messages.SetClientAllocs{NodeID: s.spec.NodeID, Index: index}
	for _, a := range view.AllocsByNode(s.spec.NodeID) {
		if a.ClientTerminalStatus() {
			continue
		}
		c := proto.Clone(a).(*messages.Allocation)
		c.Job = view.JobVersion(a.GetNamespace(), a.GetJobID(), a.GetJobVersion())
		if c.Job == nil {
			c.Job = view.JobByID(a.GetNamespace(), a.GetJobID())
		}
		out.Allocs = append(out.Allocs, c)
	}
	s.pushed = index
	ctx.Send(to, out)
}
