package node

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// probeCfg: 1 s timeout, 2 attempts 250 ms apart, 10 s quiet.
func probeCfg() ProbeConfig { return DefaultProbeConfig() }

func TestSuspectPhaseString(t *testing.T) {
	for p, want := range map[SuspectPhase]string{SuspectIdle: "idle", SuspectProbing: "probing", SuspectQuiet: "quiet", SuspectPhase(7): "SuspectPhase(7)"} {
		require.Equal(t, want, p.String())
	}
}

func TestSuspectTransitionsWholeTable(t *testing.T) {
	phases := []SuspectPhase{SuspectIdle, SuspectProbing, SuspectQuiet}
	legal := map[[2]SuspectPhase]bool{
		{SuspectIdle, SuspectIdle}: true, {SuspectIdle, SuspectProbing}: true,
		{SuspectProbing, SuspectProbing}: true, {SuspectProbing, SuspectIdle}: true, {SuspectProbing, SuspectQuiet}: true,
		{SuspectQuiet, SuspectQuiet}: true, {SuspectQuiet, SuspectProbing}: true,
	}
	for _, from := range phases {
		for _, to := range phases {
			t.Run(from.String()+"->"+to.String(), func(t *testing.T) {
				require.Equal(t, legal[[2]SuspectPhase{from, to}], canSuspect(from, to))
			})
		}
	}
}

type suspectStep = stepCase[SuspectInput, SuspectEffects, SuspectPhase]

func runSuspect(t *testing.T, s *Suspicion, steps []suspectStep) {
	t.Helper()
	runTable(t, steps, s.Step, s.Phase)
}

const gossip = "gossip reports member c1 failed"

// Every input in every phase, from the phase each row sets up.
func TestSuspicionScenarios(t *testing.T) {
	ms := time.Millisecond
	ev := func(d time.Duration) Evidence { return Evidence{At: at(d), Source: gossip} }
	probing := suspectStep{ev(0), SuspectEffects{Probe: 1, Source: gossip}, SuspectProbing}
	tests := []struct {
		name  string
		steps []suspectStep
	}{
		{"evidence starts a probe", []suspectStep{probing}},
		{"evidence while probing sends nothing more", []suspectStep{probing,
			{ev(100 * ms), SuspectEffects{}, SuspectProbing},
		}},
		{"an answer refutes: quiet, nothing else", []suspectStep{probing,
			{ProbeAnswered{At: at(10 * ms), Probe: 1}, SuspectEffects{Refuted: true, Source: gossip}, SuspectQuiet},
		}},
		{"a flap never confirms: evidence while quiet is ignored, after it probes again", []suspectStep{probing,
			{ProbeAnswered{At: at(10 * ms), Probe: 1}, SuspectEffects{Refuted: true, Source: gossip}, SuspectQuiet},
			{ev(time.Second), SuspectEffects{}, SuspectQuiet},
			{ev(10*time.Second + 10*ms - 1), SuspectEffects{}, SuspectQuiet},
			{ev(10*time.Second + 10*ms), SuspectEffects{Probe: 3, Source: gossip}, SuspectProbing},
			{ProbeAnswered{At: at(11 * time.Second), Probe: 3}, SuspectEffects{Refuted: true, Source: gossip}, SuspectQuiet},
		}},
		{"one failed probe retries after the delay", []suspectStep{probing,
			{ProbeFailed{At: at(time.Second), Probe: 1}, SuspectEffects{Probe: 2, ProbeDelay: 250 * ms, Source: gossip}, SuspectProbing},
		}},
		{"an answer to the retry refutes", []suspectStep{probing,
			{ProbeFailed{At: at(time.Second), Probe: 1}, SuspectEffects{Probe: 2, ProbeDelay: 250 * ms, Source: gossip}, SuspectProbing},
			{ProbeAnswered{At: at(1300 * ms), Probe: 2}, SuspectEffects{Refuted: true, Source: gossip}, SuspectQuiet},
		}},
		{"every attempt failed: unreachable, idle again", []suspectStep{probing,
			{ProbeFailed{At: at(time.Second), Probe: 1}, SuspectEffects{Probe: 2, ProbeDelay: 250 * ms, Source: gossip}, SuspectProbing},
			{ProbeFailed{At: at(2250 * ms), Probe: 2}, SuspectEffects{Unreachable: true, Source: gossip}, SuspectIdle},
			{ev(3 * time.Second), SuspectEffects{Probe: 4, Source: gossip}, SuspectProbing},
		}},
		{"a heartbeat during the round refutes, and a late failure is stale", []suspectStep{probing,
			{ProbeFailed{At: at(time.Second), Probe: 1}, SuspectEffects{Probe: 2, ProbeDelay: 250 * ms, Source: gossip}, SuspectProbing},
			{Alive{At: at(1100 * ms)}, SuspectEffects{Refuted: true, Source: gossip}, SuspectQuiet},
			{ProbeFailed{At: at(2250 * ms), Probe: 2}, SuspectEffects{}, SuspectQuiet},
		}},
		{"stale results change nothing", []suspectStep{probing,
			{ProbeFailed{At: at(time.Second), Probe: 1}, SuspectEffects{Probe: 2, ProbeDelay: 250 * ms, Source: gossip}, SuspectProbing},
			{ProbeFailed{At: at(time.Second), Probe: 1}, SuspectEffects{}, SuspectProbing},
			{ProbeAnswered{At: at(time.Second), Probe: 1}, SuspectEffects{}, SuspectProbing},
			{ProbeAnswered{At: at(time.Second), Probe: 9}, SuspectEffects{}, SuspectProbing},
		}},
		{"results and heartbeats while idle change nothing", []suspectStep{
			{ProbeAnswered{At: t0, Probe: 0}, SuspectEffects{}, SuspectIdle},
			{ProbeFailed{At: t0, Probe: 0}, SuspectEffects{}, SuspectIdle},
			{Alive{At: t0}, SuspectEffects{}, SuspectIdle},
		}},
		{"a heartbeat while quiet changes nothing", []suspectStep{probing,
			{ProbeAnswered{At: at(10 * ms), Probe: 1}, SuspectEffects{Refuted: true, Source: gossip}, SuspectQuiet},
			{Alive{At: at(5 * time.Second)}, SuspectEffects{}, SuspectQuiet},
			{ev(10*time.Second + 10*ms), SuspectEffects{Probe: 3, Source: gossip}, SuspectProbing},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runSuspect(t, NewSuspicion(probeCfg()), tt.steps)
		})
	}
}

func TestSuspicionOneAttemptAtLeast(t *testing.T) {
	for _, attempts := range []int{0, 1} {
		cfg := probeCfg()
		cfg.Attempts = attempts
		runSuspect(t, NewSuspicion(cfg), []suspectStep{
			{Evidence{At: t0, Source: gossip}, SuspectEffects{Probe: 1, Source: gossip}, SuspectProbing},
			{ProbeFailed{At: at(time.Second), Probe: 1}, SuspectEffects{Unreachable: true, Source: gossip}, SuspectIdle},
		})
	}
}

func TestSuspicionErrorsChangeNothing(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   SuspectInput
	}{
		{"nil input", nil},
		{"zero evidence time", Evidence{Source: gossip}},
		{"zero answer time", ProbeAnswered{Probe: 1}},
		{"zero failure time", ProbeFailed{Probe: 1}},
		{"zero alive time", Alive{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSuspicion(probeCfg())
			_, err := s.Step(Evidence{At: t0, Source: gossip})
			require.NoError(t, err)
			before := *s
			eff, err := s.Step(tt.in)
			require.ErrorIs(t, err, ErrInvalidStatusInput)
			require.Equal(t, SuspectEffects{}, eff)
			require.Equal(t, before, *s)
		})
	}
}

// Unreachable is an early missed heartbeat: disconnected with a window,
// down without, nothing for a node no longer ready.
func TestStatusUnreachable(t *testing.T) {
	sec := time.Second
	tests := []struct {
		name    string
		initial string
		steps   []step
	}{
		{"ready without a window goes down", "initializing", []step{registerAtT0,
			{Unreachable{At: at(3 * sec)}, Effects{NewStatus: "down", StatusDescription: DescUnreachable}, StatusDown},
		}},
		{"ready with a window goes disconnected for the window", "initializing", []step{registerAtT0,
			{ClientDisconnectWindow{Window: 10 * sec}, Effects{ArmTimerAt: at(15 * sec)}, StatusReady},
			{Unreachable{At: at(3 * sec)}, Effects{NewStatus: "disconnected", StatusDescription: DescUnreachable, MarkAllocsUnknown: true, ArmTimerAt: at(13 * sec)}, StatusDisconnected},
			{Tick{At: at(13 * sec)}, Effects{NewStatus: "down", StatusDescription: DescDisconnectExpired}, StatusDown},
		}},
		{"disconnected stays as it is", "initializing", []step{registerAtT0,
			{ClientDisconnectWindow{Window: 10 * sec}, Effects{ArmTimerAt: at(15 * sec)}, StatusReady},
			{Tick{At: at(15 * sec)}, Effects{NewStatus: "disconnected", StatusDescription: DescHeartbeatMissed, MarkAllocsUnknown: true, ArmTimerAt: at(25 * sec)}, StatusDisconnected},
			{Unreachable{At: at(16 * sec)}, Effects{}, StatusDisconnected},
		}},
		{"down stays down", "down", []step{
			{Unreachable{At: t0}, Effects{}, StatusDown},
		}},
		{"a heartbeat after it reconnects", "initializing", []step{registerAtT0,
			{Unreachable{At: at(3 * sec)}, Effects{NewStatus: "down", StatusDescription: DescUnreachable}, StatusDown},
			{Heartbeat{At: at(4 * sec), Nodes: 1}, Effects{NewStatus: "ready", StatusDescription: DescReconnected, TTL: 10 * sec, ArmTimerAt: at(19 * sec)}, StatusReady},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runSteps(t, NewNodeStatus(testCfg(), tt.initial), tt.steps)
		})
	}
	_, err := NewNodeStatus(testCfg(), "ready").Step(Unreachable{})
	require.ErrorIs(t, err, ErrInvalidStatusInput)
}
