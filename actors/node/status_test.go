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
	for s, want := range map[status]string{
		statusUnknown: "unknown", statusInitializing: "initializing", statusReady: "ready",
		statusDisconnected: "disconnected", statusDown: "down", status(9): "Status(9)",
	} {
		require.Equal(t, want, s.String())
		got, ok := parseStatus(want)
		require.Equal(t, s >= statusInitializing && s <= statusDown, ok, want)
		if ok {
			require.Equal(t, s, got)
		}
	}
	got, ok := parseStatus("")
	require.True(t, ok)
	require.Equal(t, statusInitializing, got)
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
	require.Zero(t, randomJitter(0))
	require.Zero(t, randomJitter(-time.Second))
	cfg := DefaultHeartbeatConfig()
	for range 1000 {
		j := randomJitter(10)
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

type step = stepCase[input, effects, status]

func runSteps(t *testing.T, s *nodeStatus, steps []step) {
	t.Helper()
	runTable(t, steps, s.Step, s.Status)
}

// register at t0: TTL 10s, deadline t0+15s.
var registerAtT0 = step{
	in:    Registered{At: t0, Nodes: 3},
	want:  effects{NewStatus: "ready", StatusDescription: descRegistered, TTL: 10 * time.Second, ArmTimerAt: at(15 * time.Second)},
	state: statusReady,
}

func TestMissedHeartbeatAtDeadline(t *testing.T) {
	down := effects{NewStatus: "down", StatusDescription: descHeartbeatMissed}
	tests := []struct {
		name   string
		tick   time.Time
		want   effects
		status status
	}{
		{"one ns before the deadline re-arms", at(15*time.Second - 1), effects{ArmTimerAt: at(15 * time.Second)}, statusReady},
		{"at the deadline goes down", at(15 * time.Second), down, statusDown},
		{"just past the deadline goes down", at(15*time.Second + 1), down, statusDown},
		{"long past the deadline goes down", at(time.Hour), down, statusDown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newNodeStatus(testCfg(), "initializing")
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
			{heartbeat{At: t0, Nodes: 1}, effects{NewStatus: "ready", StatusDescription: descHeartbeat, TTL: 10 * sec, ArmTimerAt: at(15 * sec)}, statusReady},
		}},
		{"tick before the deadline re-arms", "initializing", []step{
			registerAtT0,
			{Tick{At: at(3 * sec)}, effects{ArmTimerAt: at(15 * sec)}, statusReady},
			{Tick{At: at(14 * sec)}, effects{ArmTimerAt: at(15 * sec)}, statusReady},
		}},
		{"heartbeats extend the deadline", "initializing", []step{
			registerAtT0,
			{heartbeat{At: at(8 * sec), Nodes: 3}, effects{TTL: 10 * sec, ArmTimerAt: at(23 * sec)}, statusReady},
			{Tick{At: at(15 * sec)}, effects{ArmTimerAt: at(23 * sec)}, statusReady},
			{heartbeat{At: at(20 * sec), Nodes: 1000}, effects{TTL: 20 * sec, ArmTimerAt: at(45 * sec)}, statusReady},
			{Tick{At: at(44 * sec)}, effects{ArmTimerAt: at(45 * sec)}, statusReady},
			{Tick{At: at(45 * sec)}, effects{NewStatus: "down", StatusDescription: descHeartbeatMissed}, statusDown},
		}},
		{"re-register while ready keeps status", "ready", []step{
			{Registered{At: t0, Nodes: 1}, effects{TTL: 10 * sec, ArmTimerAt: at(15 * sec)}, statusReady},
		}},
		{"disconnect window: disconnected then down", "initializing", []step{
			registerAtT0,
			{clientDisconnectWindow{Window: 30 * sec}, effects{ArmTimerAt: at(15 * sec)}, statusReady},
			{Tick{At: at(16 * sec)}, effects{NewStatus: "disconnected", StatusDescription: descHeartbeatMissed, MarkAllocsUnknown: true, ArmTimerAt: at(46 * sec)}, statusDisconnected},
			{Tick{At: at(46*sec - 1)}, effects{ArmTimerAt: at(46 * sec)}, statusDisconnected},
			{Tick{At: at(46 * sec)}, effects{NewStatus: "down", StatusDescription: descDisconnectExpired}, statusDown},
			{Tick{At: at(100 * sec)}, effects{}, statusDown},
		}},
		{"window grows a disconnected deadline, never shrinks it", "initializing", []step{
			registerAtT0,
			{clientDisconnectWindow{Window: 30 * sec}, effects{ArmTimerAt: at(15 * sec)}, statusReady},
			{Tick{At: at(20 * sec)}, effects{NewStatus: "disconnected", StatusDescription: descHeartbeatMissed, MarkAllocsUnknown: true, ArmTimerAt: at(50 * sec)}, statusDisconnected},
			{clientDisconnectWindow{Window: 60 * sec}, effects{ArmTimerAt: at(80 * sec)}, statusDisconnected},
			{clientDisconnectWindow{Window: 0}, effects{ArmTimerAt: at(80 * sec)}, statusDisconnected},
			{Tick{At: at(50 * sec)}, effects{ArmTimerAt: at(80 * sec)}, statusDisconnected},
		}},
		{"window removed: a missed node goes down", "initializing", []step{
			registerAtT0,
			{clientDisconnectWindow{Window: 30 * sec}, effects{ArmTimerAt: at(15 * sec)}, statusReady},
			{clientDisconnectWindow{Window: 0}, effects{ArmTimerAt: at(15 * sec)}, statusReady},
			{Tick{At: at(15 * sec)}, effects{NewStatus: "down", StatusDescription: descHeartbeatMissed}, statusDown},
		}},
		{"reconnect from disconnected", "initializing", []step{
			registerAtT0,
			{clientDisconnectWindow{Window: 30 * sec}, effects{ArmTimerAt: at(15 * sec)}, statusReady},
			{Tick{At: at(15 * sec)}, effects{NewStatus: "disconnected", StatusDescription: descHeartbeatMissed, MarkAllocsUnknown: true, ArmTimerAt: at(45 * sec)}, statusDisconnected},
			{heartbeat{At: at(40 * sec), Nodes: 1}, effects{NewStatus: "ready", StatusDescription: descReconnected, TTL: 10 * sec, ArmTimerAt: at(55 * sec)}, statusReady},
			{Tick{At: at(45 * sec)}, effects{ArmTimerAt: at(55 * sec)}, statusReady},
		}},
		{"re-register from disconnected reconnects", "disconnected", []step{
			{Registered{At: t0, Nodes: 1}, effects{NewStatus: "ready", StatusDescription: descReconnected, TTL: 10 * sec, ArmTimerAt: at(15 * sec)}, statusReady},
		}},
		{"reconnect from down by heartbeat", "initializing", []step{
			registerAtT0,
			{Tick{At: at(15 * sec)}, effects{NewStatus: "down", StatusDescription: descHeartbeatMissed}, statusDown},
			{heartbeat{At: at(60 * sec), Nodes: 1}, effects{NewStatus: "ready", StatusDescription: descReconnected, TTL: 10 * sec, ArmTimerAt: at(75 * sec)}, statusReady},
		}},
		{"reconnect from down by registering", "down", []step{
			{Tick{At: t0}, effects{}, statusDown},
			{Registered{At: t0, Nodes: 1}, effects{NewStatus: "ready", StatusDescription: descReconnected, TTL: 10 * sec, ArmTimerAt: at(15 * sec)}, statusReady},
		}},
		{"new leader: failover deadline for a ready node", "ready", []step{
			{Tick{At: t0}, effects{ArmTimerAt: at(65 * sec)}, statusReady},
			{Tick{At: at(65 * sec)}, effects{NewStatus: "down", StatusDescription: descHeartbeatMissed}, statusDown},
		}},
		{"new leader: disconnected node keeps its longer window", "disconnected", []step{
			{clientDisconnectWindow{Window: 10 * time.Minute}, effects{}, statusDisconnected},
			{Tick{At: t0}, effects{ArmTimerAt: at(10 * time.Minute)}, statusDisconnected},
			{Tick{At: at(10 * time.Minute)}, effects{NewStatus: "down", StatusDescription: descDisconnectExpired}, statusDown},
		}},
		{"new leader: disconnected node gets at least the failover period", "disconnected", []step{
			{Tick{At: t0}, effects{ArmTimerAt: at(65 * sec)}, statusDisconnected},
			{Tick{At: at(65 * sec)}, effects{NewStatus: "down", StatusDescription: descDisconnectExpired}, statusDown},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runSteps(t, newNodeStatus(testCfg(), tt.initial), tt.steps)
		})
	}
}

func TestStepErrorsChangeNothing(t *testing.T) {
	tests := []struct {
		name    string
		initial string
		in      input
		wantErr error
	}{
		{"unknown status cannot become ready", "bogus", Registered{At: t0, Nodes: 1}, errIllegalStatusTransition},
		{"unknown status cannot tick", "bogus", Tick{At: t0}, errIllegalStatusTransition},
		{"nil input", "ready", nil, errInvalidStatusInput},
		{"pointer input", "ready", &heartbeat{At: t0}, errInvalidStatusInput},
		{"zero heartbeat time", "ready", heartbeat{Nodes: 1}, errInvalidStatusInput},
		{"zero registered time", "down", Registered{Nodes: 1}, errInvalidStatusInput},
		{"zero tick time", "ready", Tick{}, errInvalidStatusInput},
		{"negative window", "disconnected", clientDisconnectWindow{Window: -time.Second}, errInvalidStatusInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newNodeStatus(testCfg(), tt.initial)
			before := *s
			eff, err := s.Step(tt.in)
			require.ErrorIs(t, err, tt.wantErr)
			require.Equal(t, effects{}, eff)
			require.Equal(t, before, *s)
		})
	}
}

func TestFailedStepKeepsDeadline(t *testing.T) {
	s := newNodeStatus(testCfg(), "initializing")
	runSteps(t, s, []step{registerAtT0})
	_, err := s.Step(clientDisconnectWindow{Window: -1})
	require.ErrorIs(t, err, errInvalidStatusInput)
	require.Equal(t, at(15*time.Second), s.Deadline())
	require.Equal(t, t0, s.LastHeartbeat())
	runSteps(t, s, []step{
		{Tick{At: at(15 * time.Second)}, effects{NewStatus: "down", StatusDescription: descHeartbeatMissed}, statusDown},
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
			s := newNodeStatus(cfg, "ready")
			runSteps(t, s, []step{{Tick{At: t0}, effects{ArmTimerAt: tt.want}, statusReady}})
		})
	}
}
