package node

import (
	"fmt"
	"slices"
	"time"
)

// Evidence that a node is gone, other than its missed heartbeat deadline,
// is only a reason to look: gossip can report a member failed while the
// member runs fine (its gossip port is blocked, its UDP is dropped, a long
// GC pause). The leader looks by probing the node's client actor directly
// over the RPC transport; only a node that fails every probe, with no
// heartbeat in between, counts as unreachable. A node that answers is left
// alone, and evidence about it is ignored for a quiet period, so a
// flapping gossip view costs a probe now and then and never a status.
//
// Suspicion is that decision as a state machine (no I/O, no clock); the
// server-side node actor feeds it and carries out its effects.

// ProbeConfig sets how the leader checks evidence that a node is gone.
type ProbeConfig struct {
	// Timeout is how long one probe waits for the node's answer.
	Timeout time.Duration
	// Attempts is how many probes in a row must fail (at least 1).
	Attempts int
	// RetryDelay is the pause before the next attempt after a failed one.
	RetryDelay time.Duration
	// Quiet is how long evidence is ignored after the node answered a
	// probe or heartbeated during one.
	Quiet time.Duration
}

// defaultProbeConfig returns a 1 s timeout, 2 attempts 250 ms apart and a
// 10 s quiet period: a dead node is confirmed about 2.25 s after the
// evidence, and a node gossip wrongly reports failed is probed at most
// once per 10 s.
func defaultProbeConfig() ProbeConfig {
	return ProbeConfig{Timeout: time.Second, Attempts: 2, RetryDelay: 250 * time.Millisecond, Quiet: 10 * time.Second}
}

func (c ProbeConfig) attempts() int { return max(c.Attempts, 1) }

// suspectPhase is where a Suspicion stands.
type suspectPhase uint8

// Suspicion phases.
const (
	suspectIdle    suspectPhase = iota // no evidence being checked
	suspectProbing                     // a probe is out (or about to go)
	suspectQuiet                       // the node answered: evidence is ignored until quietUntil
)

var suspectPhaseNames = [...]string{suspectIdle: "idle", suspectProbing: "probing", suspectQuiet: "quiet"}

// String returns the phase's name.
func (p suspectPhase) String() string {
	if int(p) < len(suspectPhaseNames) {
		return suspectPhaseNames[p]
	}
	return fmt.Sprintf("SuspectPhase(%d)", uint8(p))
}

// suspectTransitions lists, for each phase, the phases it may move to
// (staying is always allowed: a retry stays probing).
var suspectTransitions = map[suspectPhase][]suspectPhase{
	suspectIdle:    {suspectProbing},
	suspectProbing: {suspectIdle, suspectQuiet},
	suspectQuiet:   {suspectProbing},
}

func canSuspect(from, to suspectPhase) bool {
	return from == to || slices.Contains(suspectTransitions[from], to)
}

// suspectInput is one thing that happens to a Suspicion.
type suspectInput interface{ isSuspectInput() }

// evidence says something other than the heartbeats suggests the node is
// gone; Source says what (for the log).
type evidence struct {
	At     time.Time
	Source string
}

// probeAnswered says probe number Probe got the node's answer.
type probeAnswered struct {
	At    time.Time
	Probe uint64
}

// probeFailed says probe number Probe timed out or could not be delivered.
type probeFailed struct {
	At     time.Time
	Probe  uint64
	Reason string
}

// alive says the node registered or heartbeated.
type alive struct{ At time.Time }

func (evidence) isSuspectInput()      {}
func (probeAnswered) isSuspectInput() {}
func (probeFailed) isSuspectInput()   {}
func (alive) isSuspectInput()         {}

// suspectEffects is what the actor must do after a step.
type suspectEffects struct {
	// Probe, when not 0, is the number of a probe to send after
	// ProbeDelay; the actor fails it (probeFailed) when no answer came
	// Timeout after it was sent.
	Probe      uint64
	ProbeDelay time.Duration
	// Unreachable: the node failed every attempt, with no heartbeat in
	// between; the node status machine takes Unreachable.
	Unreachable bool
	// Refuted: the node answered, or heartbeated, while being checked.
	Refuted bool
	// Source is the evidence being checked, for the log.
	Source string
}

// suspicion checks the evidence about one node. It does no I/O and reads
// no clock: time comes in the inputs.
type suspicion struct {
	cfg        ProbeConfig
	phase      suspectPhase
	probe      uint64 // the probe out now (0: none); numbers only grow
	attempt    int    // attempts made in this round
	source     string
	quietUntil time.Time
}

// newSuspicion returns an idle Suspicion.
func newSuspicion(cfg ProbeConfig) *suspicion { return &suspicion{cfg: cfg} }

// Phase returns the current phase.
func (s *suspicion) Phase() suspectPhase { return s.phase }

// Step takes one input and returns the effects. A result for a probe
// other than the one out is stale and changes nothing. On error nothing
// changes.
func (s *suspicion) Step(in suspectInput) (suspectEffects, error) {
	next := *s
	eff, err := next.step(in)
	if err != nil {
		return suspectEffects{}, err
	}
	if !canSuspect(s.phase, next.phase) {
		return suspectEffects{}, fmt.Errorf("%w: suspicion %s -> %s on %T", errIllegalStatusTransition, s.phase, next.phase, in)
	}
	*s = next
	return eff, nil
}

func (s *suspicion) step(in suspectInput) (suspectEffects, error) {
	switch m := in.(type) {
	case evidence:
		if m.At.IsZero() {
			return suspectEffects{}, fmt.Errorf("%w: zero time", errInvalidStatusInput)
		}
		return s.onEvidence(m), nil
	case probeAnswered:
		return s.onAnswer(m.At, m.Probe)
	case probeFailed:
		return s.onFailed(m.At, m.Probe)
	case alive:
		return s.onAnswer(m.At, s.probe)
	default:
		return suspectEffects{}, fmt.Errorf("%w: %T", errInvalidStatusInput, in)
	}
}

// onEvidence starts a round of probes, unless one runs or the node
// answered less than Quiet ago.
func (s *suspicion) onEvidence(m evidence) suspectEffects {
	if s.phase == suspectProbing || (s.phase == suspectQuiet && m.At.Before(s.quietUntil)) {
		return suspectEffects{}
	}
	s.phase, s.source, s.attempt = suspectProbing, m.Source, 1
	s.probe++
	return suspectEffects{Probe: s.probe, Source: s.source}
}

// onAnswer ends a round: the node is alive. Outside a round (an Alive
// while idle or quiet) nothing changes.
func (s *suspicion) onAnswer(at time.Time, probe uint64) (suspectEffects, error) {
	if at.IsZero() {
		return suspectEffects{}, fmt.Errorf("%w: zero time", errInvalidStatusInput)
	}
	if s.phase != suspectProbing || probe != s.probe {
		return suspectEffects{}, nil
	}
	eff := suspectEffects{Refuted: true, Source: s.source}
	s.phase, s.quietUntil, s.source = suspectQuiet, at.Add(s.cfg.Quiet), ""
	s.probe++ // a late result of the probe that was out is stale
	return eff, nil
}

// onFailed sends the next attempt, or, after the last, confirms.
func (s *suspicion) onFailed(at time.Time, probe uint64) (suspectEffects, error) {
	if at.IsZero() {
		return suspectEffects{}, fmt.Errorf("%w: zero time", errInvalidStatusInput)
	}
	if s.phase != suspectProbing || probe != s.probe {
		return suspectEffects{}, nil
	}
	s.probe++
	if s.attempt < s.cfg.attempts() {
		s.attempt++
		return suspectEffects{Probe: s.probe, ProbeDelay: s.cfg.RetryDelay, Source: s.source}, nil
	}
	eff := suspectEffects{Unreachable: true, Source: s.source}
	s.phase, s.source, s.attempt = suspectIdle, "", 0
	return eff, nil
}
