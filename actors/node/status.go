package node

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/troupe-dev/troupe/messages"
)

// status is a node's status as the leader sees it (Nomad's node statuses).
type status uint8

// Node statuses. The zero value is not a status.
const (
	statusUnknown status = iota
	statusInitializing
	statusReady
	statusDisconnected
	statusDown
)

var statusNames = [...]string{
	statusUnknown:      "unknown",
	statusInitializing: messages.NodeStatusInit,
	statusReady:        messages.NodeStatusReady,
	statusDisconnected: messages.NodeStatusDisconnected,
	statusDown:         messages.NodeStatusDown,
}

// String returns the status as Nomad spells it ("ready", "down", ...).
func (s status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// parseStatus reads a status name; "" (an unset Node.Status) reads as
// initializing. ok is false for any other unknown name.
func parseStatus(name string) (status, bool) {
	if name == "" {
		return statusInitializing, true
	}
	for s := statusInitializing; s <= statusDown; s++ {
		if statusNames[s] == name {
			return s, true
		}
	}
	return statusUnknown, false
}

// transitions lists, for each status, the statuses it may move to.
// Nothing moves back to initializing: a (re-)registered node is ready.
var transitions = map[status][]status{
	statusInitializing: {statusReady, statusDisconnected, statusDown},
	statusReady:        {statusDisconnected, statusDown},
	statusDisconnected: {statusReady, statusDown},
	statusDown:         {statusReady},
}

// canTransition is CanTransition on parsed statuses. Staying in a known
// status is always allowed.
func canTransition(from, to status) bool {
	if from == statusUnknown || to == statusUnknown {
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
	f, ok1 := parseStatus(from)
	t, ok2 := parseStatus(to)
	return ok1 && ok2 && canTransition(f, t)
}

// Status descriptions returned in Effects.StatusDescription.
const (
	descRegistered        = "node registered"
	descHeartbeat         = "node heartbeat received"
	descHeartbeatMissed   = "node heartbeat missed"
	descDisconnectExpired = "node disconnect window expired"
	descReconnected       = "node reconnected"
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
		Jitter:                 randomJitter,
	}
}

// randomJitter returns a random duration in [0, limit].
func randomJitter(limit time.Duration) time.Duration {
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

// input is one thing that happens to a node's status machine.
type input interface{ isInput() }

// Registered says the node registered or re-registered, at At, in a cluster
// of Nodes nodes (for the TTL).
type Registered struct {
	At    time.Time
	Nodes int
}

// heartbeat says the node heartbeated at At, in a cluster of Nodes nodes.
type heartbeat struct {
	At    time.Time
	Nodes int
}

// Tick says the actor's timer fired at At.
type Tick struct{ At time.Time }

// clientDisconnectWindow is the longest disconnect window among the node's
// allocations (disconnect.lost_after, stop_on_client_after,
// max_client_disconnect); 0 means none, so a missed node goes down.
type clientDisconnectWindow struct{ Window time.Duration }

func (Registered) isInput()             {}
func (heartbeat) isInput()              {}
func (Tick) isInput()                   {}
func (clientDisconnectWindow) isInput() {}

// effects is what the actor must do after a step. Every status change
// (NewStatus != "") also needs node evaluations, as in Nomad: from them the
// scheduler marks a down node's allocations lost and reconciles a
// reconnected node's, so neither needs an effect of its own.
type effects struct {
	NewStatus         string        // "" when unchanged
	StatusDescription string        // why, for the log and Node.StatusDescription; "" when unchanged
	TTL               time.Duration // to tell the client (Registered, Heartbeat)
	// ArmTimerAt is when the next Tick is due; it replaces any pending
	// timer. Zero: none is due (node down, or never heard from).
	ArmTimerAt        time.Time
	MarkAllocsUnknown bool // node went disconnected: allocs become unknown
}

// nodeStatus is the status machine of one node as the leader sees it. It
// does no I/O and reads no clock: time comes in the inputs.
type nodeStatus struct {
	cfg           HeartbeatConfig
	status        status
	lastHeartbeat time.Time
	ttl           time.Duration
	deadline      time.Time     // heartbeat deadline, or end of the disconnect window
	window        time.Duration // longest disconnect window of the node's allocs
	missedAt      time.Time     // when the node went disconnected
}

// newNodeStatus returns the machine for a node in the initial status (as
// the state store has it: "" reads as initializing). With an unknown status
// every Step fails with errIllegalStatusTransition. The machine has no
// deadline until the first Registered, Heartbeat or Tick; a new leader
// should send clientDisconnectWindow, then Tick, when it starts the actor.
func newNodeStatus(cfg HeartbeatConfig, initial string) *nodeStatus {
	st, _ := parseStatus(initial)
	return &nodeStatus{cfg: cfg, status: st}
}

// Status returns the current status.
func (s *nodeStatus) Status() status { return s.status }

// Deadline returns when the node counts as missed (or, disconnected, when
// it goes down); zero when no deadline is running.
func (s *nodeStatus) Deadline() time.Time { return s.deadline }

// LastHeartbeat returns the time of the last Registered or Heartbeat.
func (s *nodeStatus) LastHeartbeat() time.Time { return s.lastHeartbeat }

// Step takes one input and returns the effects. On error nothing changes.
func (s *nodeStatus) Step(in input) (effects, error) {
	if s.status == statusUnknown {
		return effects{}, fmt.Errorf("%w: from status %s on %T", errIllegalStatusTransition, s.status, in)
	}
	next := *s
	eff, err := next.step(in)
	if err != nil {
		return effects{}, err
	}
	*s = next
	return eff, nil
}

func (s *nodeStatus) step(in input) (effects, error) {
	switch m := in.(type) {
	case Registered:
		return s.onAlive(m.At, m.Nodes, descRegistered)
	case heartbeat:
		return s.onAlive(m.At, m.Nodes, descHeartbeat)
	case Tick:
		return s.onTick(m.At)
	case clientDisconnectWindow:
		return s.onWindow(m.Window)
	case unreachable:
		return s.onUnreachable(m.At)
	default:
		return effects{}, fmt.Errorf("%w: %T", errInvalidStatusInput, in)
	}
}

// become moves to a new status if the table allows it.
func (s *nodeStatus) become(to status, why string, eff *effects) error {
	if !canTransition(s.status, to) {
		return fmt.Errorf("%w: %s -> %s", errIllegalStatusTransition, s.status, to)
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
func (s *nodeStatus) onAlive(at time.Time, nodes int, why string) (effects, error) {
	if at.IsZero() {
		return effects{}, fmt.Errorf("%w: zero time", errInvalidStatusInput)
	}
	var eff effects
	if s.status == statusDisconnected || s.status == statusDown {
		why = descReconnected
	}
	if err := s.become(statusReady, why, &eff); err != nil {
		return effects{}, err
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
func (s *nodeStatus) onTick(at time.Time) (effects, error) {
	if at.IsZero() {
		return effects{}, fmt.Errorf("%w: zero time", errInvalidStatusInput)
	}
	if s.status == statusDown {
		return effects{}, nil
	}
	if s.deadline.IsZero() {
		s.startFailover(at)
		return effects{ArmTimerAt: s.deadline}, nil
	}
	if at.Before(s.deadline) {
		return effects{ArmTimerAt: s.deadline}, nil
	}
	if s.status == statusDisconnected {
		return s.goDown(descDisconnectExpired)
	}
	return s.missed(at)
}

// startFailover gives a live node the machine never heard from (a new
// leader) a full failover period, or its disconnect window if longer.
func (s *nodeStatus) startFailover(at time.Time) {
	s.deadline = at.Add(s.cfg.failoverTTL() + s.cfg.Grace)
	if s.status == statusDisconnected {
		s.missedAt = at
		if end := at.Add(s.window); end.After(s.deadline) {
			s.deadline = end
		}
	}
}

// missed handles a missed heartbeat: disconnected while the node's allocs
// have a disconnect window, else down.
func (s *nodeStatus) missed(at time.Time) (effects, error) {
	if s.window <= 0 {
		return s.goDown(descHeartbeatMissed)
	}
	var eff effects
	if err := s.become(statusDisconnected, descHeartbeatMissed, &eff); err != nil {
		return effects{}, err
	}
	s.missedAt = at
	s.deadline = at.Add(s.window)
	eff.MarkAllocsUnknown, eff.ArmTimerAt = true, s.deadline
	return eff, nil
}

func (s *nodeStatus) goDown(why string) (effects, error) {
	var eff effects
	if err := s.become(statusDown, why, &eff); err != nil {
		return effects{}, err
	}
	s.deadline, s.missedAt = time.Time{}, time.Time{}
	return eff, nil
}

// onWindow records the disconnect window. A disconnected node's deadline
// only grows with it: its allocs were told the window when it went.
func (s *nodeStatus) onWindow(w time.Duration) (effects, error) {
	if w < 0 {
		return effects{}, fmt.Errorf("%w: negative disconnect window %s", errInvalidStatusInput, w)
	}
	s.window = w
	if s.status == statusDisconnected && !s.missedAt.IsZero() {
		if end := s.missedAt.Add(w); end.After(s.deadline) {
			s.deadline = end
		}
	}
	return effects{ArmTimerAt: s.deadline}, nil
}
