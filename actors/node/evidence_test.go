package node

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// probeCfg: 1 s timeout, 2 attempts 250 ms apart, 10 s quiet.
func probeCfg() ProbeConfig { return defaultProbeConfig() }

func TestSuspectPhaseString(t *testing.T) {
	for p, want := range map[suspectPhase]string{suspectIdle: "idle", suspectProbing: "probing", suspectQuiet: "quiet", suspectPhase(7): "SuspectPhase(7)"} {
		require.Equal(t, want, p.String())
	}
}

func TestSuspectTransitionsWholeTable(t *testing.T) {
	phases := []suspectPhase{suspectIdle, suspectProbing, suspectQuiet}
	legal := map[[2]suspectPhase]bool{
		{suspectIdle, suspectIdle}: true, {suspectIdle, suspectProbing}: true,
		{suspectProbing, suspectProbing}: true, {suspectProbing, suspectIdle}: true, {suspectProbing, suspectQuiet}: true,
		{suspectQuiet, suspectQuiet}: true, {suspectQuiet, suspectProbing}: true,
	}
	for _, from := range phases {
		for _, to := range phases {
			t.Run(from.String()+"->"+to.String(), func(t *testing.T) {
				require.Equal(t, legal[[2]suspectPhase{from, to}], canSuspect(from, to))
			})
		}
	}
}

type suspectStep = stepCase[suspectInput, suspectEffects, suspectPhase]

func runSuspect(t *testing.T, s *suspicion, steps []suspectStep) {
	t.Helper()
	runTable(t, steps, s.Step, s.Phase)
}

const gossip = "gossip reports member c1 failed"

// Every input in every phase, from the phase each row sets up.
func TestSuspicionScenarios(t *testing.T) {
	ms := time.Millisecond
	ev := func(d time.Duration) evidence { return evidence{At: at(d), Source: gossip} }
	probing := suspectStep{ev(0), suspectEffects{Probe: 1, Source: gossip}, suspectProbing}
	tests := []struct {
		name  string
		steps []suspectStep
	}{
		{"evidence starts a probe", []suspectStep{probing}},
		{"evidence while probing sends nothing more", []suspectStep{probing,
			{ev(100 * ms), suspectEffects{}, suspectProbing},
		}},
		{"an answer refutes: quiet, nothing else", []suspectStep{probing,
			{probeAnswered{At: at(10 * ms), Probe: 1}, suspectEffects{Refuted: true, Source: gossip}, suspectQuiet},
		}},
		{"a flap never confirms: evidence while quiet is ignored, after it probes again", []suspectStep{probing,
			{probeAnswered{At: at(10 * ms), Probe: 1}, suspectEffects{Refuted: true, Source: gossip}, suspectQuiet},
			{ev(time.Second), suspectEffects{}, suspectQuiet},
			{ev(10*time.Second + 10*ms - 1), suspectEffects{}, suspectQuiet},
			{ev(10*time.Second + 10*ms), suspectEffects{Probe: 3, Source: gossip}, suspectProbing},
			{probeAnswered{At: at(11 * time.Second), Probe: 3}, suspectEffects{Refuted: true, Source: gossip}, suspectQuiet},
		}},
		{"one failed probe retries after the delay", []suspectStep{probing,
			{probeFailed{At: at(time.Second), Probe: 1}, suspectEffects{Probe: 2, ProbeDelay: 250 * ms, Source: gossip}, suspectProbing},
		}},
		{"an answer to the retry refutes", []suspectStep{probing,
			{probeFailed{At: at(time.Second), Probe: 1}, suspectEffects{Probe: 2, ProbeDelay: 250 * ms, Source: gossip}, suspectProbing},
			{probeAnswered{At: at(1300 * ms), Probe: 2}, suspectEffects{Refuted: true, Source: gossip}, suspectQuiet},
		}},
		{"every attempt failed: unreachable, idle again", []suspectStep{probing,
			{probeFailed{At: at(time.Second), Probe: 1}, suspectEffects{Probe: 2, ProbeDelay: 250 * ms, Source: gossip}, suspectProbing},
			{probeFailed{At: at(2250 * ms), Probe: 2}, suspectEffects{Unreachable: true, Source: gossip}, suspectIdle},
			{ev(3 * time.Second), suspectEffects{Probe: 4, Source: gossip}, suspectProbing},
		}},
		{"a heartbeat during the round refutes, and a late failure is stale", []suspectStep{probing,
			{probeFailed{At: at(time.Second), Probe: 1}, suspectEffects{Probe: 2, ProbeDelay: 250 * ms, Source: gossip}, suspectProbing},
			{alive{At: at(1100 * ms)}, suspectEffects{Refuted: true, Source: gossip}, suspectQuiet},
			{probeFailed{At: at(2250 * ms), Probe: 2}, suspectEffects{}, suspectQuiet},
		}},
		{"stale results change nothing", []suspectStep{probing,
			{probeFailed{At: at(time.Second), Probe: 1}, suspectEffects{Probe: 2, ProbeDelay: 250 * ms, Source: gossip}, suspectProbing},
			{probeFailed{At: at(time.Second), Probe: 1}, suspectEffects{}, suspectProbing},
			{probeAnswered{At: at(time.Second), Probe: 1}, suspectEffects{}, suspectProbing},
			{probeAnswered{At: at(time.Second), Probe: 9}, suspectEffects{}, suspectProbing},
		}},
		{"results and heartbeats while idle change nothing", []suspectStep{
			{probeAnswered{At: t0, Probe: 0}, suspectEffects{}, suspectIdle},
			{probeFailed{At: t0, Probe: 0}, suspectEffects{}, suspectIdle},
			{alive{At: t0}, suspectEffects{}, suspectIdle},
		}},
		{"a heartbeat while quiet changes nothing", []suspectStep{probing,
			{probeAnswered{At: at(10 * ms), Probe: 1}, suspectEffects{Refuted: true, Source: gossip}, suspectQuiet},
			{alive{At: at(5 * time.Second)}, suspectEffects{}, suspectQuiet},
			{ev(10*time.Second + 10*ms), suspectEffects{Probe: 3, Source: gossip}, suspectProbing},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runSuspect(t, newSuspicion(probeCfg()), tt.steps)
		})
	}
}

func TestSuspicionOneAttemptAtLeast(t *testing.T) {
	for _, attempts := range []int{0, 1} {
		cfg := probeCfg()
		cfg.Attempts = attempts
		runSuspect(t, newSuspicion(cfg), []suspectStep{
			{evidence{At: t0, Source: gossip}, suspectEffects{Probe: 1, Source: gossip}, suspectProbing},
			{probeFailed{At: at(time.Second), Probe: 1}, suspectEffects{Unreachable: true, Source: gossip}, suspectIdle},
		})
	}
}

func TestSuspicionErrorsChangeNothing(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   suspectInput
	}{
		{"nil input", nil},
		{"zero evidence time", evidence{Source: gossip}},
		{"zero answer time", probeAnswered{Probe: 1}},
		{"zero failure time", probeFailed{Probe: 1}},
		{"zero alive time", alive{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSuspicion(probeCfg())
			_, err := s.Step(evidence{At: t0, Source: gossip})
			require.NoError(t, err)
			before := *s
			eff, err := s.Step(tt.in)
			require.ErrorIs(t, err, errInvalidStatusInput)
			require.Equal(t, suspectEffects{}, eff)
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
			{unreachable{At: at(3 * sec)}, effects{NewStatus: "down", StatusDescription: descUnreachable}, statusDown},
		}},
		{"ready with a window goes disconnected for the window", "initializing", []step{registerAtT0,
			{clientDisconnectWindow{Window: 10 * sec}, effects{ArmTimerAt: at(15 * sec)}, statusReady},
			{unreachable{At: at(3 * sec)}, effects{NewStatus: "disconnected", StatusDescription: descUnreachable, MarkAllocsUnknown: true, ArmTimerAt: at(13 * sec)}, statusDisconnected},
			{Tick{At: at(13 * sec)}, effects{NewStatus: "down", StatusDescription: descDisconnectExpired}, statusDown},
		}},
		{"disconnected stays as it is", "initializing", []step{registerAtT0,
			{clientDisconnectWindow{Window: 10 * sec}, effects{ArmTimerAt: at(15 * sec)}, statusReady},
			{Tick{At: at(15 * sec)}, effects{NewStatus: "disconnected", StatusDescription: descHeartbeatMissed, MarkAllocsUnknown: true, ArmTimerAt: at(25 * sec)}, statusDisconnected},
			{unreachable{At: at(16 * sec)}, effects{}, statusDisconnected},
		}},
		{"down stays down", "down", []step{
			{unreachable{At: t0}, effects{}, statusDown},
		}},
		{"a heartbeat after it reconnects", "initializing", []step{registerAtT0,
			{unreachable{At: at(3 * sec)}, effects{NewStatus: "down", StatusDescription: descUnreachable}, statusDown},
			{heartbeat{At: at(4 * sec), Nodes: 1}, effects{NewStatus: "ready", StatusDescription: descReconnected, TTL: 10 * sec, ArmTimerAt: at(19 * sec)}, statusReady},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runSteps(t, newNodeStatus(testCfg(), tt.initial), tt.steps)
		})
	}
	_, err := newNodeStatus(testCfg(), "ready").Step(unreachable{})
	require.ErrorIs(t, err, errInvalidStatusInput)
}
