package server

import (
	"context"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/actors/node"
	"github.com/troupe-dev/troupe/actors/scheduler"
	"github.com/troupe-dev/troupe/actors/volume"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// Raft is this server's raft (*cluster.Raft implements it). The RPC
// handlers answer only while it leads, and commit through it directly.
type Raft interface {
	IsLeader() bool
	Apply(ctx context.Context, cmd *messages.Command) (any, uint64, error)
}

// Proposer commits a raft command through whichever server leads (the
// agent's Apply forwards when this one does not). The leader's actors
// propose through it.
type Proposer interface {
	Apply(ctx context.Context, cmd *messages.Command) (any, uint64, error)
}

// StateView is the replicated state as the server actor and the leader's
// actors read it (the state store's snapshot implements it).
type StateView interface {
	scheduler.StateView
	node.StateView
	volume.StateView
	Jobs() []*messages.Job
}

var _ StateView = (*state.Snap)(nil)

// ClientLocator says where a node's client actor lives. The leader's node
// and controller actors call it from their own goroutines: it may read
// only what does not change while they run.
type ClientLocator interface {
	// ClientPID is node n's client actor, nil when it has none; local says
	// the actor runs in this process.
	ClientPID(n *messages.Node) (pid *actor.PID, local bool)
}

// Spec is everything the server actor needs.
type Spec struct {
	Raft     Raft
	Proposer Proposer
	State    func() StateView
	Clients  ClientLocator
	Clock    actors.Clock // nil: the wall clock
	Logger   *slog.Logger
	// Registry reports the leader's actors in the actor tree; nil spawns
	// them with plain props.
	Registry *actors.Registry
	// Heartbeat sets the TTLs the node actors hand to clients.
	Heartbeat node.HeartbeatConfig
	// MaxPlacements bounds one plan (scheduler.Spec.MaxPlacements).
	MaxPlacements int
	// VolumeRetry is the volume actors' backoff (zero: the default).
	VolumeRetry actors.Retry
	// Servers lists the alive servers' RPC addresses and Leader the
	// leader's ("" when unknown); clients are told both.
	Servers func() []string
	Leader  func() string
	// GC configures the leader's garbage collector (zero: Nomad's
	// defaults).
	GC GCConfig
	// GainedLeadership, when set, runs on the server actor each time this
	// server starts to lead, once the leader's actors run.
	GainedLeadership func()
	// Vars answers clients' variable reads for templates; nil: refused.
	Vars VarReader
	// ACLTokens answers client-only agents' token resolutions; nil:
	// refused.
	ACLTokens ACLTokenResolver
	// WorkloadIdentities answers client-only agents' checks of workload
	// identity JWTs; nil: refused.
	WorkloadIdentities WorkloadIdentityResolver
	// SchedulerStats is kept up to date by the leader's scheduler (nil:
	// not kept); the agent's metrics read it.
	SchedulerStats *scheduler.Stats
	// Identities signs the workload identities of a client's allocation,
	// and WorkloadVars answers a template's read made with one
	// (identity.go); nil: refused.
	Identities   IdentitySigner
	WorkloadVars WorkloadVarReader
}

// withDefaults returns a copy of the spec with its zero fields filled.
func (sp *Spec) withDefaults() *Spec {
	c := *sp
	if c.Clock == nil {
		c.Clock = actors.RealClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Servers == nil {
		c.Servers = func() []string { return nil }
	}
	if c.Leader == nil {
		c.Leader = func() string { return "" }
	}
	if c.GainedLeadership == nil {
		c.GainedLeadership = func() {}
	}
	return &c
}

// props are the props of one child of the given kind.
func (sp *Spec) props(kind string, producer actor.Producer, opts ...actor.PropsOption) *actor.Props {
	if sp.Registry == nil {
		return actor.PropsFromProducer(producer, append(opts, actors.WithLifetime())...)
	}
	return sp.Registry.Props(kind, producer, opts...)
}

// Clients is the usual ClientLocator: this agent's own client by its
// PID, any other node's client actor ("client") at the node's RPC
// address. Its fields are set before the server actor starts and never
// change.
type Clients struct {
	LocalNodeID string
	LocalPID    *actor.PID // nil: this agent runs no client
}

// ClientActorName is the name of every agent's client actor.
const ClientActorName = "client"

// ClientPID implements ClientLocator. A node without an RPC address
// (simulated nodes in benchmarks, the local node of a -dev agent seen
// from elsewhere) has no client to reach.
func (c Clients) ClientPID(n *messages.Node) (*actor.PID, bool) {
	if c.LocalPID != nil && n.GetID() == c.LocalNodeID {
		return c.LocalPID, true
	}
	if n.GetRPCAddr() == "" {
		return nil, false
	}
	return actor.NewPID(n.GetRPCAddr(), ClientActorName), false
}
