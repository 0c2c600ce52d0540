package node

import (
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// fakeProbed stands in for a client actor: it counts probes and answers
// them as node answer ("" answers nothing).
type fakeProbed struct {
	answer string
	probes atomic.Int32
}

func (f *fakeProbed) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*messages.ProbeNode); ok {
		f.probes.Add(1)
		if f.answer != "" {
			ctx.Respond(&messages.ProbeNodeResponse{NodeID: f.answer})
		}
	}
}

// TestProbeConfirmsOrRefutes: gossip's evidence alone changes nothing;
// the node goes down only when both probes fail (no answer, or an answer
// from another node), and a node that answers is not probed again during
// the quiet period.
func TestProbeConfirmsOrRefutes(t *testing.T) {
	for _, tt := range []struct {
		name   string
		answer string
		want   []string
	}{
		{"the node answers: a flap, nothing changes", "n1", nil},
		{"no answer: down after two timeouts", "", []string{"down"}},
		{"another node answers: down", "other", []string{"down"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := actors.NewFakeClock(time.Unix(1000, 0))
			view := &fakeView{node: &messages.Node{ID: "n1", Status: "ready"},
				job:    &messages.Job{ID: "web", Namespace: "default", Type: "service"},
				allocs: []*messages.Allocation{{ID: "a1", JobID: "web", Namespace: "default", DesiredStatus: "run", ClientStatus: "running"}}}
			prop := &flakyProposer{}
			target := &fakeProbed{answer: tt.answer}
			var sys *actors.System
			pid, stop := startNodeServerWith(t, clock, view, prop, func(s *actors.System, spec *ServerSpec) {
				sys = s
				probed, err := s.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return target }), "client")
				require.NoError(t, err)
				spec.ClientPID = func(*messages.Node) *actor.PID { return probed }
				// Heartbeat deadlines far away; the probe's timeout on the fake clock.
				spec.Heartbeat = HeartbeatConfig{MinTTL: time.Hour, Grace: time.Hour, FailoverTTL: time.Hour}
				spec.Probe = ProbeConfig{Timeout: time.Minute, Attempts: 2, RetryDelay: time.Second, Quiet: 10 * time.Minute}
			})
			defer stop()
			require.Eventually(t, func() bool { return clock.Pending() == 1 }, 5*time.Second, time.Millisecond) // the status timer

			sys.Root.Send(pid, &SuspectNode{NodeID: "n1", Source: "test"})
			require.Eventually(t, func() bool { return target.probes.Load() == 1 }, 5*time.Second, time.Millisecond)
			if tt.answer == "n1" {
				// Refuted: the probe's timer is gone; more evidence is ignored.
				require.Eventually(t, func() bool { return clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
				sys.Root.Send(pid, &SuspectNode{NodeID: "n1", Source: "test"})
				_, err := sys.Root.RequestFuture(pid, &messages.NodeHeartbeat{NodeID: "n1"}, 5*time.Second).Result()
				require.NoError(t, err)
				require.EqualValues(t, 1, target.probes.Load(), "evidence in the quiet period sends no probe")
				require.Empty(t, prop.statuses())
				return
			}
			for i := 0; i < 5 && len(prop.statuses()) == 0; i++ {
				require.Eventually(t, func() bool { return clock.Pending() == 2 || len(prop.statuses()) > 0 }, 5*time.Second, time.Millisecond)
				clock.Advance(time.Minute) // the retry delay, or a probe's timeout
			}
			require.Eventually(t, func() bool { return len(prop.statuses()) > 0 }, 5*time.Second, time.Millisecond)
			require.Equal(t, tt.want, prop.statuses())
			require.EqualValues(t, 2, target.probes.Load())
			prop.mu.Lock()
			up := prop.calls[0].GetUpdateNodeStatus()
			prop.mu.Unlock()
			require.Equal(t, descUnreachable, up.GetStatusDescription())
			require.Len(t, up.GetEvals(), 1, "the job on the node is evaluated")
		})
	}
}

// startNodeServerWith spawns the server-side node actor of node n1 over
// view and prop as startNodeServer does, with edit applied to its spec
// first (it may spawn other actors in the system), and returns its PID
// and what stops it.
func startNodeServerWith(t *testing.T, clock *actors.FakeClock, view StateView, prop Proposer,
	edit func(*actors.System, *ServerSpec)) (*actor.PID, func()) {
	t.Helper()
	_, pid, stop := spawnNodeServerSpec(t, clock, view, prop, edit)
	return pid, stop
}

// spawnNodeServer spawns the server-side node actor of node n1 with the
// heartbeat config cfg.
func spawnNodeServer(t *testing.T, clock *actors.FakeClock, view StateView, prop Proposer, cfg HeartbeatConfig) (*actors.System, *actor.PID, func()) {
	t.Helper()
	return spawnNodeServerSpec(t, clock, view, prop, func(_ *actors.System, s *ServerSpec) { s.Heartbeat = cfg })
}

// spawnNodeServerSpec spawns the server-side node actor of node n1 with
// one-second heartbeat settings, its spec changed by edit (nil: none).
func spawnNodeServerSpec(t *testing.T, clock *actors.FakeClock, view StateView, prop Proposer,
	edit func(*actors.System, *ServerSpec)) (*actors.System, *actor.PID, func()) {
	t.Helper()
	sys := actors.NewSystem(slog.New(slog.DiscardHandler))
	cfg := HeartbeatConfig{MinTTL: time.Second, Grace: time.Second, FailoverTTL: time.Second}
	spec := &ServerSpec{NodeID: "n1", State: func() StateView { return view }, Proposer: prop, Clock: clock,
		Heartbeat: cfg, ClientPID: func(*messages.Node) *actor.PID { return nil },
		Servers: func() []string { return nil }, Leader: func() string { return "" }, Logger: slog.New(slog.DiscardHandler)}
	if edit != nil {
		edit(sys, spec)
	}
	pid, err := sys.Root.SpawnNamed(sys.Props("node", NewServer(spec)), "nodes/n1")
	require.NoError(t, err)
	return sys, pid, func() { _ = sys.Root.StopFuture(pid).Wait(); sys.Shutdown() }
}
