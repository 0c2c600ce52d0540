package node

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/troupe-dev/troupe/messages"
)

// Status is a node's status as the leader sees it (Nomad's node statuses).
type Status uint8

// Node statuses. The zero value is not a status.
const (
	StatusUnknown Status = iota
	StatusInitializing
	StatusReady
	StatusDisconnected
	StatusDown
)

var statusNames = [...]string{
	StatusUnknown:      "unknown",
	StatusInitializing: messages.NodeStatusInit,
	StatusReady:        messages.NodeStatusReady,
	StatusDisconnected: messages.NodeStatusDisconnected,
	StatusDown:         messages.NodeStatusDown,
}

// String returns the status as Nomad spells it ("ready", "down", ...).
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// ParseStatus reads a status name; "" (an unset Node.Status) reads as
// initializing. ok is false for any other unknown name.
func ParseStatus(name string) (Status, bool) {
	if name == "" {
		return StatusInitializing, true
	}
	for s := StatusInitializing; s <= StatusDown; s++ {
		if statusNames[s] == name {
			return s, true
		}
	}
	return StatusUnknown, false
}

// transitions lists, for each status, the statuses it may move to.
// Nothing moves back to initializing: a (re-)registered node is ready.
var transitions = map[Status][]Status{
	StatusInitializing: {StatusReady, StatusDisconnected, StatusDown},
	StatusReady:        {StatusDisconnected, StatusDown},
	StatusDisconnected: {StatusReady, StatusDown},
	StatusDown:         {StatusReady},
}

// canTransition is CanTransition on parsed statuses. Staying in a known
// status is always allowed.
func canTransition(from, to Status) bool {
	if from == StatusUnknown || to == StatusUnknown {
		return false
	}
	if from == to {
		return true
	}
	for _, t := range transitions[from] {
		if t == to {
			return true
		}
	}
	return false
}

// CanTransition reports whether a node may move from one status to another
// (names as Nomad spells them). Staying in the same known status is allowed;
// unknown names never are.
func CanTransition(from, to string) bool {
	f, ok1 := ParseStatus(from)
	t, ok2 := ParseStatus(to)
	return ok1 && ok2 && canTransition(f, t)
}

// Status descriptions returned in Effects.StatusDescription.
const (
	DescRegistered        = "node registered"
	DescHeartbeat         = "node heartbeat received"
	DescHeartbeatMissed   = "node heartbeat missed"
	DescDisconnectExpired = "node disconnect window expired"
	DescReconnected       = "node reconnected"
)

// HeartbeatConfig sets how long nodes may go between heartbeats.
type HeartbeatConfig struct {
	// MinTTL is the smallest base TTL handed to a node; MaxTTL caps the
	// cluster-size scaling (0: no cap; Nomad has none). The jitter comes
	// on top of the cap.
	MinTTL, MaxTTL time.Duration
	// MaxHeartbeatsPerSecond scales the base TTL with the number of live
	// nodes so that a leader sees about this many heartbeats a second
	// (0: no scaling).
	MaxHeartbeatsPerSecond float64
	// Grace is the extra time past the TTL before a node counts as missed.
	Grace time.Duration
	// FailoverTTL is the deadline given to a live node the machine has not
	// heard from (a new leader rebuilt it); 0 means MaxTTL, or MinTTL.
	FailoverTTL time.Duration
	// Jitter returns a value in [0, limit]; it is added to each base TTL
	// (limit is the base) so nodes spread out. nil adds none.
	Jitter func(limit time.Duration) time.Duration
}

// DefaultHeartbeatConfig returns Nomad's defaults (10s minimum TTL, 50
// heartbeats a second, 10s grace, 5m failover) with a 5m cap on the base
// and a random jitter of up to the base.
func DefaultHeartbeatConfig() HeartbeatConfig {
	return HeartbeatConfig{
		MinTTL:                 10 * time.Second,
		MaxTTL:                 5 * time.Minute,
		MaxHeartbeatsPerSecond: 50,
		Grace:                  10 * time.Second,
		FailoverTTL:            5 * time.Minute,
		Jitter:                 RandomJitter,
	}
}

// RandomJitter returns a random duration in [0, limit].
func RandomJitter(limit time.Duration) time.Duration {
	if limit <= 0 {
		return 0
	}
	return rand.N(limit + 1)
}

// BaseTTL is the heartbeat TTL before the jitter for a cluster of the
// given number of live nodes: max(MinTTL, nodes/MaxHeartbeatsPerSecond
// seconds), capped at MaxTTL (Nomad's RateScaledInterval).
func (c HeartbeatConfig) BaseTTL(nodes int) time.Duration {
	ttl := c.MinTTL
	if c.MaxHeartbeatsPerSecond > 0 && nodes > 0 {
		scaled := time.Duration(float64(nodes) / c.MaxHeartbeatsPerSecond * float64(time.Second))
		ttl = max(ttl, scaled)
	}
	if c.MaxTTL > 0 {
		ttl = min(ttl, c.MaxTTL)
	}
	return ttl
}

// TTL is the heartbeat TTL handed to a node: the base plus a jitter of up
// to the base, so TTLs spread evenly over [base, 2*base] and the nodes'
// heartbeats do not bunch, as Nomad spreads them (its RandomStagger of
// the base).
func (c HeartbeatConfig) TTL(nodes int) time.Duration {
	base := c.BaseTTL(nodes)
	if c.Jitter == nil {
		return base
	}
	return base + min(max(c.Jitter(base), 0), base)
}

func (c HeartbeatConfig) failoverTTL() time.Duration {
	switch {
	case c.FailoverTTL > 0:
		return c.FailoverTTL
	case c.MaxTTL > 0:
		return c.MaxTTL
	}
	return c.MinTTL
}

// Input is one thing that happens to a node's status machine.
type Input interface{ isInput() }

// Registered says the node registered or re-registered, at At, in a cluster
// of Nodes nodes (for the TTL).
type Registered struct {
	At    time.Time
	Nodes int
}

// Heartbeat says the node heartbeated at At, in a cluster of Nodes nodes.
type Heartbeat struct {
	At    time.Time
	Nodes int
}

// Tick says the actor's timer fired at At.
type Tick struct{ At time.Time }

// ClientDisconnectWindow is the longest disconnect window among the node's
// allocations (disconnect.lost_after, stop_on_client_after,
// max_client_disconnect); 0 means none, so a missed node goes down.
type ClientDisconnectWindow struct{ Window time.Duration }

func (Registered) isInput()             {}
func (Heartbeat) isInput()              {}
func (Tick) isInput()                   {}
func (ClientDisconnectWindow) isInput() {}

// Effects is what the actor must do after a step. Every status change
// (NewStatus != "") also needs node evaluations, as in Nomad: from them the
// scheduler marks a down node's allocations lost and reconciles a
// reconnected node's, so neither needs an effect of its own.
type Effects struct {
	NewStatus         string        // "" when unchanged
	StatusDescription string        // why, for the log and Node.StatusDescription; "" when unchanged
	TTL               time.Duration // to tell the client (Registered, Heartbeat)
	// ArmTimerAt is when the next Tick is due; it replaces any pending
	// timer. Zero: none is due (node down, or never heard from).
	ArmTimerAt        time.Time
	MarkAllocsUnknown bool // node went disconnected: allocs become unknown
}

// NodeStatus is the status machine of one node as the leader sees it. It
// does no I/O and reads no clock: time comes in the inputs.
type NodeStatus struct {
	cfg           HeartbeatConfig
	status        Status
	lastHeartbeat time.Time
	ttl           time.Duration
	deadline      time.Time     // heartbeat deadline, or end of the disconnect window
	window        time.Duration // longest disconnect window of the node's allocs
	missedAt      time.Time     // when the node went disconnected
}

// NewNodeStatus returns the machine for a node in the initial status (as
// the state store has it: "" reads as initializing). With an unknown status
// every Step fails with ErrIllegalStatusTransition. The machine has no
// deadline until the first Registered, Heartbeat or Tick; a new leader
// should send ClientDisconnectWindow, then Tick, when it starts the actor.
func NewNodeStatus(cfg HeartbeatConfig, initial string) *NodeStatus {
	st, _ := ParseStatus(initial)
	return &NodeStatus{cfg: cfg, status: st}
}

// Status returns the current status.
func (s *NodeStatus) Status() Status { return s.status }

// Deadline returns when the node counts as missed (or, disconnected, when
// it goes down); zero when no deadline is running.
func (s *NodeStatus) Deadline() time.Time { return s.deadline }

// LastHeartbeat returns the time of the last Registered or Heartbeat.
func (s *NodeStatus) LastHeartbeat() time.Time { return s.lastHeartbeat }

// Step takes one input and returns the effects. On error nothing changes.
func (s *NodeStatus) Step(in Input) (Effects, error) {
	if s.status == StatusUnknown {
		return Effects{}, fmt.Errorf("%w: from status %s on %T", ErrIllegalStatusTransition, s.status, in)
	}
	next := *s
	eff, err := next.step(in)
	if err != nil {
		return Effects{}, err
	}
	*s = next
	return eff, nil
}

func (s *NodeStatus) step(in Input) (Effects, error) {
	switch m := in.(type) {
	case Registered:
		return s.onAlive(m.At, m.Nodes, DescRegistered)
	case Heartbeat:
		return s.onAlive(m.At, m.Nodes, DescHeartbeat)
	case Tick:
		return s.onTick(m.At)
	case ClientDisconnectWindow:
		return s.onWindow(m.Window)
	case Unreachable:
		return s.onUnreachable(m.At)
	default:
		return Effects{}, fmt.Errorf("%w: %T", ErrInvalidStatusInput, in)
	}
}

// become moves to a new status if the table allows it.
func (s *NodeStatus) become(to Status, why string, eff *Effects) error {
	if !canTransition(s.status, to) {
		return fmt.Errorf("%w: %s -> %s", ErrIllegalStatusTransition, s.status, to)
	}
	if to != s.status {
		s.status = to
		eff.NewStatus = to.String()
		eff.StatusDescription = why
	}
	return nil
}

// onAlive handles a registration or heartbeat: the node is ready and its
// deadline moves to At + TTL + Grace.
func (s *NodeStatus) onAlive(at time.Time, nodes int, why string) (Effects, error) {
	if at.IsZero() {
		return Effects{}, fmt.Errorf("%w: zero time", ErrInvalidStatusInput)
	}
	var eff Effects
	if s.status == StatusDisconnected || s.status == StatusDown {
		why = DescReconnected
	}
	if err := s.become(StatusReady, why, &eff); err != nil {
		return Effects{}, err
	}
	s.ttl = s.cfg.TTL(nodes)
	s.lastHeartbeat = at
	s.deadline = at.Add(s.ttl + s.cfg.Grace)
	s.missedAt = time.Time{}
	eff.TTL, eff.ArmTimerAt = s.ttl, s.deadline
	return eff, nil
}

// onTick checks the deadline. A node counts as missed from its deadline
// on (a Tick at exactly the deadline misses); before it, the timer is
// re-armed at the deadline.
func (s *NodeStatus) onTick(at time.Time) (Effects, error) {
	if at.IsZero() {
		return Effects{}, fmt.Errorf("%w: zero time", ErrInvalidStatusInput)
	}
	if s.status == StatusDown {
		return Effects{}, nil
	}
	if s.deadline.IsZero() {
		s.startFailover(at)
		return Effects{ArmTimerAt: s.deadline}, nil
	}
	if at.Before(s.deadline) {
		return Effects{ArmTimerAt: s.deadline}, nil
	}
	if s.status == StatusDisconnected {
		return s.goDown(DescDisconnectExpired)
	}
	return s.missed(at)
}

// startFailover gives a live node the machine never heard from (a new
// leader) a full failover period, or its disconnect window if longer.
func (s *NodeStatus) startFailover(at time.Time) {
	s.deadline = at.Add(s.cfg.failoverTTL() + s.cfg.Grace)
	if s.status == StatusDisconnected {
		s.missedAt = at
		if end := at.Add(s.window); end.After(s.deadline) {
			s.deadline = end
		}
	}
}

// missed handles a missed heartbeat: disconnected while the node's allocs
// have a disconnect window, else down.
func (s *NodeStatus) missed(at time.Time) (Effects, error) {
	if s.window <= 0 {
		return s.goDown(DescHeartbeatMissed)
	}
	var eff Effects
	if err := s.become(StatusDisconnected, DescHeartbeatMissed, &eff); err != nil {
		return Effects{}, err
	}
	s.missedAt = at
	s.deadline = at.Add(s.window)
	eff.MarkAllocsUnknown, eff.ArmTimerAt = true, s.deadline
	return eff, nil
}

func (s *NodeStatus) goDown(why string) (Effects, error) {
	var eff Effects
	if err := s.become(StatusDown, why, &eff); err != nil {
		return Effects{}, err
	}
	s.deadline, s.missedAt = time.Time{}, time.Time{}
	return eff, nil
}

// onWindow records the disconnect window. A disconnected node's deadline
// only grows with it: its allocs were told the window when it went.
func (s *NodeStatus) onWindow(w time.Duration) (Effects, error) {
	if w < 0 {
		return Effects{}, fmt.Errorf("%w: negative disconnect window %s", ErrInvalidStatusInput, w)
	}
	s.window = w
	if s.status == StatusDisconnected && !s.missedAt.IsZero() {
		if end := s.missedAt.Add(w); end.After(s.deadline) {
			s.deadline = end
		}
	}
	return Effects{ArmTimerAt: s.deadline}, nil
}
