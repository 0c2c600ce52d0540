package node

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// testCfg: TTL 10s for small clusters, 5s grace, so a node registered at
// t0 is missed from t0+15s.
func testCfg() HeartbeatConfig {
	return HeartbeatConfig{
		MinTTL: 10 * time.Second, MaxTTL: 100 * time.Second,
		MaxHeartbeatsPerSecond: 50, Grace: 5 * time.Second,
		FailoverTTL: 60 * time.Second,
	}
}

func TestStatusString(t *testing.T) {
	for s, want := range map[Status]string{
		StatusUnknown: "unknown", StatusInitializing: "initializing", StatusReady: "ready",
		StatusDisconnected: "disconnected", StatusDown: "down", Status(9): "Status(9)",
	} {
		require.Equal(t, want, s.String())
		got, ok := ParseStatus(want)
		require.Equal(t, s >= StatusInitializing && s <= StatusDown, ok, want)
		if ok {
			require.Equal(t, s, got)
		}
	}
	got, ok := ParseStatus("")
	require.True(t, ok)
	require.Equal(t, StatusInitializing, got)
}

func TestCanTransitionWholeTable(t *testing.T) {
	names := []string{"initializing", "ready", "disconnected", "down", "bogus"}
	legal := map[[2]string]bool{
		{"initializing", "initializing"}: true, {"initializing", "ready"}: true,
		{"initializing", "disconnected"}: true, {"initializing", "down"}: true,
		{"ready", "ready"}: true, {"ready", "disconnected"}: true, {"ready", "down"}: true,
		{"disconnected", "ready"}: true, {"disconnected", "disconnected"}: true,
		{"disconnected", "down"}: true,
		{"down", "ready"}:        true, {"down", "down"}: true,
	}
	for _, from := range names {
		for _, to := range names {
			t.Run(from+"->"+to, func(t *testing.T) {
				require.Equal(t, legal[[2]string{from, to}], CanTransition(from, to))
			})
		}
	}
	require.True(t, CanTransition("", "ready"), "unset status reads as initializing")
}

func TestHeartbeatTTL(t *testing.T) {
	fixed := func(j time.Duration) func(time.Duration) time.Duration {
		return func(time.Duration) time.Duration { return j }
	}
	full := func(limit time.Duration) time.Duration { return limit }
	tests := []struct {
		name  string
		mod   func(*HeartbeatConfig)
		nodes int
		want  time.Duration
	}{
		{"no nodes gets min", nil, 0, 10 * time.Second},
		{"small cluster gets min", nil, 100, 10 * time.Second},
		{"scales at 50/s", nil, 1000, 20 * time.Second},
		{"scales fractionally", nil, 1025, 20500 * time.Millisecond},
		{"capped at max", nil, 100000, 100 * time.Second},
		{"no cap when max is 0", func(c *HeartbeatConfig) { c.MaxTTL = 0 }, 100000, 2000 * time.Second},
		{"no scaling without a rate", func(c *HeartbeatConfig) { c.MaxHeartbeatsPerSecond = 0 }, 100000, 10 * time.Second},
		{"jitter added", func(c *HeartbeatConfig) { c.Jitter = fixed(time.Second) }, 1000, 21 * time.Second},
		{"full jitter doubles the base", func(c *HeartbeatConfig) { c.Jitter = full }, 1000, 40 * time.Second},
		{"full jitter on the min", func(c *HeartbeatConfig) { c.Jitter = full }, 10, 20 * time.Second},
		{"jitter on top of cap", func(c *HeartbeatConfig) { c.Jitter = full }, 100000, 200 * time.Second},
		{"jitter clamped to the base", func(c *HeartbeatConfig) { c.Jitter = fixed(time.Hour) }, 0, 20 * time.Second},
		{"negative jitter clamped to 0", func(c *HeartbeatConfig) { c.Jitter = fixed(-time.Hour) }, 0, 10 * time.Second},
		{"10,000 nodes at 50/s: 200s base", func(c *HeartbeatConfig) { c.MaxTTL = 0 }, 10000, 200 * time.Second},
		{"10,000 nodes at 500/s: 20s base", func(c *HeartbeatConfig) { c.MaxHeartbeatsPerSecond = 500 }, 10000, 20 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testCfg()
			if tt.mod != nil {
				tt.mod(&cfg)
			}
			require.Equal(t, tt.want, cfg.TTL(tt.nodes))
		})
	}
}

func TestRandomJitterBounds(t *testing.T) {
	require.Zero(t, RandomJitter(0))
	require.Zero(t, RandomJitter(-time.Second))
	cfg := DefaultHeartbeatConfig()
	for range 1000 {
		j := RandomJitter(10)
		require.GreaterOrEqual(t, j, time.Duration(0))
		require.LessOrEqual(t, j, time.Duration(10))
		ttl := cfg.TTL(1)
		require.GreaterOrEqual(t, ttl, cfg.MinTTL)
		require.LessOrEqual(t, ttl, 2*cfg.MinTTL)
	}
}

// TestHeartbeatTTLSpread: with the random jitter, TTLs cover the whole
// [base, 2*base] (Nomad's spread), not a narrow band above the base.
func TestHeartbeatTTLSpread(t *testing.T) {
	cfg := DefaultHeartbeatConfig()
	base := cfg.BaseTTL(1000) // 20s at 50/s
	require.Equal(t, 20*time.Second, base)
	var lo, hi int
	for range 2000 {
		ttl := cfg.TTL(1000)
		require.GreaterOrEqual(t, ttl, base)
		require.LessOrEqual(t, ttl, 2*base)
		if ttl < base+base/4 {
			lo++
		}
		if ttl > 2*base-base/4 {
			hi++
		}
	}
	// Each quarter holds about 500 of 2000; a narrow jitter holds none in
	// the top one.
	require.Greater(t, lo, 300, "TTLs near the base")
	require.Greater(t, hi, 300, "TTLs near twice the base")
}

type step = stepCase[Input, Effects, Status]

func runSteps(t *testing.T, s *NodeStatus, steps []step) {
	t.Helper()
	runTable(t, steps, s.Step, s.Status)
}

// register at t0: TTL 10s, deadline t0+15s.
var registerAtT0 = step{
	in:    Registered{At: t0, Nodes: 3},
	want:  Effects{NewStatus: "ready", StatusDescription: DescRegistered, TTL: 10 * time.Second, ArmTimerAt: at(15 * time.Second)},
	state: StatusReady,
}

func TestMissedHeartbeatAtDeadline(t *testing.T) {
	down := Effects{NewStatus: "down", StatusDescription: DescHeartbeatMissed}
	tests := []struct {
		name   string
		tick   time.Time
		want   Effects
		status Status
	}{
		{"one ns before the deadline re-arms", at(15*time.Second - 1), Effects{ArmTimerAt: at(15 * time.Second)}, StatusReady},
		{"at the deadline goes down", at(15 * time.Second), down, StatusDown},
		{"just past the deadline goes down", at(15*time.Second + 1), down, StatusDown},
		{"long past the deadline goes down", at(time.Hour), down, StatusDown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewNodeStatus(testCfg(), "initializing")
			runSteps(t, s, []step{registerAtT0, {Tick{At: tt.tick}, tt.want, tt.status}})
		})
	}
}

func TestStatusScenarios(t *testing.T) {
	sec := time.Second
	tests := []struct {
		name    string
		initial string
		steps   []step
	}{
		{"heartbeat readies an initializing node", "", []step{
			{Heartbeat{At: t0, Nodes: 1}, Effects{NewStatus: "ready", StatusDescription: DescHeartbeat, TTL: 10 * sec, ArmTimerAt: at(15 * sec)}, StatusReady},
		}},
		{"tick before the deadline re-arms", "initializing", []step{
			registerAtT0,
			{Tick{At: at(3 * sec)}, Effects{ArmTimerAt: at(15 * sec)}, StatusReady},
			{Tick{At: at(14 * sec)}, Effects{ArmTimerAt: at(15 * sec)}, StatusReady},
		}},
		{"heartbeats extend the deadline", "initializing", []step{
			registerAtT0,
			{Heartbeat{At: at(8 * sec), Nodes: 3}, Effects{TTL: 10 * sec, ArmTimerAt: at(23 * sec)}, StatusReady},
			{Tick{At: at(15 * sec)}, Effects{ArmTimerAt: at(23 * sec)}, StatusReady},
			{Heartbeat{At: at(20 * sec), Nodes: 1000}, Effects{TTL: 20 * sec, ArmTimerAt: at(45 * sec)}, StatusReady},
			{Tick{At: at(44 * sec)}, Effects{ArmTimerAt: at(45 * sec)}, StatusReady},
			{Tick{At: at(45 * sec)}, Effects{NewStatus: "down", StatusDescription: DescHeartbeatMissed}, StatusDown},
		}},
		{"re-register while ready keeps status", "ready", []step{
			{Registered{At: t0, Nodes: 1}, Effects{TTL: 10 * sec, ArmTimerAt: at(15 * sec)}, StatusReady},
		}},
		{"disconnect window: disconnected then down", "initializing", []step{
			registerAtT0,
			{ClientDisconnectWindow{Window: 30 * sec}, Effects{ArmTimerAt: at(15 * sec)}, StatusReady},
			{Tick{At: at(16 * sec)}, Effects{NewStatus: "disconnected", StatusDescription: DescHeartbeatMissed, MarkAllocsUnknown: true, ArmTimerAt: at(46 * sec)}, StatusDisconnected},
			{Tick{At: at(46*sec - 1)}, Effects{ArmTimerAt: at(46 * sec)}, StatusDisconnected},
			{Tick{At: at(46 * sec)}, Effects{NewStatus: "down", StatusDescription: DescDisconnectExpired}, StatusDown},
			{Tick{At: at(100 * sec)}, Effects{}, StatusDown},
		}},
		{"window grows a disconnected deadline, never shrinks it", "initializing", []step{
			registerAtT0,
			{ClientDisconnectWindow{Window: 30 * sec}, Effects{ArmTimerAt: at(15 * sec)}, StatusReady},
			{Tick{At: at(20 * sec)}, Effects{NewStatus: "disconnected", StatusDescription: DescHeartbeatMissed, MarkAllocsUnknown: true, ArmTimerAt: at(50 * sec)}, StatusDisconnected},
			{ClientDisconnectWindow{Window: 60 * sec}, Effects{ArmTimerAt: at(80 * sec)}, StatusDisconnected},
			{ClientDisconnectWindow{Window: 0}, Effects{ArmTimerAt: at(80 * sec)}, StatusDisconnected},
			{Tick{At: at(50 * sec)}, Effects{ArmTimerAt: at(80 * sec)}, StatusDisconnected},
		}},
		{"window removed: a missed node goes down", "initializing", []step{
			registerAtT0,
			{ClientDisconnectWindow{Window: 30 * sec}, Effects{ArmTimerAt: at(15 * sec)}, StatusReady},
			{ClientDisconnectWindow{Window: 0}, Effects{ArmTimerAt: at(15 * sec)}, StatusReady},
			{Tick{At: at(15 * sec)}, Effects{NewStatus: "down", StatusDescription: DescHeartbeatMissed}, StatusDown},
		}},
		{"reconnect from disconnected", "initializing", []step{
			registerAtT0,
			{ClientDisconnectWindow{Window: 30 * sec}, Effects{ArmTimerAt: at(15 * sec)}, StatusReady},
			{Tick{At: at(15 * sec)}, Effects{NewStatus: "disconnected", StatusDescription: DescHeartbeatMissed, MarkAllocsUnknown: true, ArmTimerAt: at(45 * sec)}, StatusDisconnected},
			{Heartbeat{At: at(40 * sec), Nodes: 1}, Effects{NewStatus: "ready", StatusDescription: DescReconnected, TTL: 10 * sec, ArmTimerAt: at(55 * sec)}, StatusReady},
			{Tick{At: at(45 * sec)}, Effects{ArmTimerAt: at(55 * sec)}, StatusReady},
		}},
		{"re-register from disconnected reconnects", "disconnected", []step{
			{Registered{At: t0, Nodes: 1}, Effects{NewStatus: "ready", StatusDescription: DescReconnected, TTL: 10 * sec, ArmTimerAt: at(15 * sec)}, StatusReady},
		}},
		{"reconnect from down by heartbeat", "initializing", []step{
			registerAtT0,
			{Tick{At: at(15 * sec)}, Effects{NewStatus: "down", StatusDescription: DescHeartbeatMissed}, StatusDown},
			{Heartbeat{At: at(60 * sec), Nodes: 1}, Effects{NewStatus: "ready", StatusDescription: DescReconnected, TTL: 10 * sec, ArmTimerAt: at(75 * sec)}, StatusReady},
		}},
		{"reconnect from down by registering", "down", []step{
			{Tick{At: t0}, Effects{}, StatusDown},
			{Registered{At: t0, Nodes: 1}, Effects{NewStatus: "ready", StatusDescription: DescReconnected, TTL: 10 * sec, ArmTimerAt: at(15 * sec)}, StatusReady},
		}},
		{"new leader: failover deadline for a ready node", "ready", []step{
			{Tick{At: t0}, Effects{ArmTimerAt: at(65 * sec)}, StatusReady},
			{Tick{At: at(65 * sec)}, Effects{NewStatus: "down", StatusDescription: DescHeartbeatMissed}, StatusDown},
		}},
		{"new leader: disconnected node keeps its longer window", "disconnected", []step{
			{ClientDisconnectWindow{Window: 10 * time.Minute}, Effects{}, StatusDisconnected},
			{Tick{At: t0}, Effects{ArmTimerAt: at(10 * time.Minute)}, StatusDisconnected},
			{Tick{At: at(10 * time.Minute)}, Effects{NewStatus: "down", StatusDescription: DescDisconnectExpired}, StatusDown},
		}},
		{"new leader: disconnected node gets at least the failover period", "disconnected", []step{
			{Tick{At: t0}, Effects{ArmTimerAt: at(65 * sec)}, StatusDisconnected},
			{Tick{At: at(65 * sec)}, Effects{NewStatus: "down", StatusDescription: DescDisconnectExpired}, StatusDown},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runSteps(t, NewNodeStatus(testCfg(), tt.initial), tt.steps)
		})
	}
}

func TestStepErrorsChangeNothing(t *testing.T) {
	tests := []struct {
		name    string
		initial string
		in      Input
		wantErr error
	}{
		{"unknown status cannot become ready", "bogus", Registered{At: t0, Nodes: 1}, ErrIllegalStatusTransition},
		{"unknown status cannot tick", "bogus", Tick{At: t0}, ErrIllegalStatusTransition},
		{"nil input", "ready", nil, ErrInvalidStatusInput},
		{"pointer input", "ready", &Heartbeat{At: t0}, ErrInvalidStatusInput},
		{"zero heartbeat time", "ready", Heartbeat{Nodes: 1}, ErrInvalidStatusInput},
		{"zero registered time", "down", Registered{Nodes: 1}, ErrInvalidStatusInput},
		{"zero tick time", "ready", Tick{}, ErrInvalidStatusInput},
		{"negative window", "disconnected", ClientDisconnectWindow{Window: -time.Second}, ErrInvalidStatusInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewNodeStatus(testCfg(), tt.initial)
			before := *s
			eff, err := s.Step(tt.in)
			require.ErrorIs(t, err, tt.wantErr)
			require.Equal(t, Effects{}, eff)
			require.Equal(t, before, *s)
		})
	}
}

func TestFailedStepKeepsDeadline(t *testing.T) {
	s := NewNodeStatus(testCfg(), "initializing")
	runSteps(t, s, []step{registerAtT0})
	_, err := s.Step(ClientDisconnectWindow{Window: -1})
	require.ErrorIs(t, err, ErrInvalidStatusInput)
	require.Equal(t, at(15*time.Second), s.Deadline())
	require.Equal(t, t0, s.LastHeartbeat())
	runSteps(t, s, []step{
		{Tick{At: at(15 * time.Second)}, Effects{NewStatus: "down", StatusDescription: DescHeartbeatMissed}, StatusDown},
	})
	require.True(t, s.Deadline().IsZero())
}

func TestFailoverDeadlineFallbacks(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*HeartbeatConfig)
		want time.Time
	}{
		{"failover TTL set", nil, at(65 * time.Second)},
		{"falls back to max TTL", func(c *HeartbeatConfig) { c.FailoverTTL = 0 }, at(105 * time.Second)},
		{"then to min TTL", func(c *HeartbeatConfig) { c.FailoverTTL, c.MaxTTL = 0, 0 }, at(15 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testCfg()
			if tt.mod != nil {
				tt.mod(&cfg)
			}
			s := NewNodeStatus(cfg, "ready")
			runSteps(t, s, []step{{Tick{At: t0}, Effects{ArmTimerAt: tt.want}, StatusReady}})
		})
	}
}
