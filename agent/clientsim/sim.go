package clientsim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/messages"
)

// Config configures a Sim.
type Config struct {
	// Server is the leader's RPC address (host:port).
	Server string
	// Bind is where the Sim's transport listens ("" = 127.0.0.1:0); the
	// leader dials it to push allocation sets.
	Bind string
	// Nodes are the simulated nodes (NewNodes makes them).
	Nodes []*messages.Node
	// Registrations is how many registrations run at once (0 = 64).
	Registrations int
	// RetryAfter is the pause after a failed call (0 = 1 s).
	RetryAfter time.Duration
	Logger     *slog.Logger
}

// Sim is a set of simulated clients sharing one remote endpoint.
type Sim struct {
	cfg    Config
	client *remote.Client
	sink   *actor.PID
	nodes  []*simNode
	byID   map[string]*simNode // read-only after New
	rtts   recorder
	ctx    context.Context // ends with Close
	cancel context.CancelFunc
	calls  sync.WaitGroup // heartbeats, registrations and reports in flight
	// reportSlots bounds the allocation reports in flight.
	reportSlots chan struct{}
	reported    atomic.Int64 // allocations reported running
	pushes      atomic.Int64 // allocation sets received
	hbErrors    atomic.Int64
}

// New starts the Sim's transport and its "client" actor; nothing is
// registered until Register.
func New(cfg Config) (*Sim, error) {
	if cfg.Server == "" || len(cfg.Nodes) == 0 {
		return nil, fmt.Errorf("%w: a server address and at least one node are needed", ErrConfig)
	}
	if cfg.Registrations <= 0 {
		cfg.Registrations = 64
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c, err := remote.NewClientConfig(remote.Config{BindAddr: cfg.Bind, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sim{cfg: cfg, client: c, byID: make(map[string]*simNode, len(cfg.Nodes)), ctx: ctx, cancel: cancel,
		reportSlots: make(chan struct{}, 64)}
	for _, n := range cfg.Nodes {
		sn := &simNode{sim: s, msg: n}
		s.nodes = append(s.nodes, sn)
		s.byID[n.GetID()] = sn
	}
	sink := &sink{sim: s, reported: map[string]bool{}}
	pid, err := c.Root().SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return sink }), "client")
	if err != nil {
		cancel()
		c.Close()
		return nil, err
	}
	s.sink = pid
	return s, nil
}

// Address is where the Sim's transport listens (the nodes' RPC address).
func (s *Sim) Address() string { return s.client.Address() }

// Register registers every node, Registrations at a time, and starts each
// one's heartbeats. It returns the first error once all have answered.
func (s *Sim) Register(ctx context.Context) error {
	slots := make(chan struct{}, s.cfg.Registrations)
	errs := make(chan error, len(s.nodes))
	var wg sync.WaitGroup
	for _, n := range s.nodes {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if err := n.register(ctx); err != nil {
				errs <- fmt.Errorf("register %s: %w", n.msg.GetName(), err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// Stop ends the heartbeats of the named nodes at once (a heartbeat in
// flight still completes) and ignores what the leader pushes to them.
func (s *Sim) Stop(ids []string) {
	for _, id := range ids {
		if n := s.byID[id]; n != nil {
			n.stop()
		}
	}
}

// Node returns what the Sim knows of one node; ok is false for an unknown
// ID.
func (s *Sim) Node(id string) (NodeInfo, bool) {
	n := s.byID[id]
	if n == nil {
		return NodeInfo{}, false
	}
	return n.info(), true
}

// Nodes returns what the Sim knows of every node, in Config.Nodes order.
func (s *Sim) Nodes() []NodeInfo {
	out := make([]NodeInfo, len(s.nodes))
	for i, n := range s.nodes {
		out[i] = n.info()
	}
	return out
}

// Record starts (on) or stops recording heartbeat round trips; starting
// drops what was recorded before.
func (s *Sim) Record(on bool) { s.rtts.record(on) }

// RoundTrips returns the round trips recorded since Record(true).
func (s *Sim) RoundTrips() Latencies { return s.rtts.samples() }

// Counters are the Sim's totals since New.
type Counters struct {
	Heartbeats      int64 // answered
	HeartbeatErrors int64
	Pushes          int64 // allocation sets received
	Reported        int64 // allocations reported running
}

// Counters returns the Sim's totals.
func (s *Sim) Counters() Counters {
	return Counters{Heartbeats: s.rtts.total.Load(), HeartbeatErrors: s.hbErrors.Load(),
		Pushes: s.pushes.Load(), Reported: s.reported.Load()}
}

// Close stops every heartbeat and the "client" actor, waits for the calls
// in flight and shuts the transport down.
func (s *Sim) Close() {
	for _, n := range s.nodes {
		n.stop()
	}
	_ = s.client.Root().PoisonFuture(s.sink).Wait() // no report starts after this
	s.cancel()
	s.calls.Wait()
	s.client.Close()
}

// request sends one request to the leader's server actor, bounded by the
// Sim's lifetime and a 10 s timeout.
func request[T proto.Message](ctx context.Context, s *Sim, req proto.Message) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	return remote.Request[T](ctx, s.client.Root(), s.cfg.Server, "server", req)
}

// notFound reports whether the leader does not know the node.
func notFound(err error) bool {
	var re *remote.RemoteError
	return errors.As(err, &re) && re.NotFound()
}
