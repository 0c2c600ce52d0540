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

// DefaultProbeConfig returns a 1 s timeout, 2 attempts 250 ms apart and a
// 10 s quiet period: a dead node is confirmed about 2.25 s after the
// evidence, and a node gossip wrongly reports failed is probed at most
// once per 10 s.
func DefaultProbeConfig() ProbeConfig {
	return ProbeConfig{Timeout: time.Second, Attempts: 2, RetryDelay: 250 * time.Millisecond, Quiet: 10 * time.Second}
}

func (c ProbeConfig) attempts() int { return max(c.Attempts, 1) }

// SuspectPhase is where a Suspicion stands.
type SuspectPhase uint8

// Suspicion phases.
const (
	SuspectIdle    SuspectPhase = iota // no evidence being checked
	SuspectProbing                     // a probe is out (or about to go)
	SuspectQuiet                       // the node answered: evidence is ignored until quietUntil
)

var suspectPhaseNames = [...]string{SuspectIdle: "idle", SuspectProbing: "probing", SuspectQuiet: "quiet"}

// String returns the phase's name.
func (p SuspectPhase) String() string {
	if int(p) < len(suspectPhaseNames) {
		return suspectPhaseNames[p]
	}
	return fmt.Sprintf("SuspectPhase(%d)", uint8(p))
}

// suspectTransitions lists, for each phase, the phases it may move to
// (staying is always allowed: a retry stays probing).
var suspectTransitions = map[SuspectPhase][]SuspectPhase{
	SuspectIdle:    {SuspectProbing},
	SuspectProbing: {SuspectIdle, SuspectQuiet},
	SuspectQuiet:   {SuspectProbing},
}

func canSuspect(from, to SuspectPhase) bool {
	return from == to || slices.Contains(suspectTransitions[from], to)
}

// SuspectInput is one thing that happens to a Suspicion.
type SuspectInput interface{ isSuspectInput() }

// Evidence says something other than the heartbeats suggests the node is
// gone; Source says what (for the log).
type Evidence struct {
	At     time.Time
	Source string
}

// ProbeAnswered says probe number Probe got the node's answer.
type ProbeAnswered struct {
	At    time.Time
	Probe uint64
}

// ProbeFailed says probe number Probe timed out or could not be delivered.
type ProbeFailed struct {
	At     time.Time
	Probe  uint64
	Reason string
}

// Alive says the node registered or heartbeated.
type Alive struct{ At time.Time }

func (Evidence) isSuspectInput()      {}
func (ProbeAnswered) isSuspectInput() {}
func (ProbeFailed) isSuspectInput()   {}
func (Alive) isSuspectInput()         {}

// SuspectEffects is what the actor must do after a step.
type SuspectEffects struct {
	// Probe, when not 0, is the number of a probe to send after
	// ProbeDelay; the actor fails it (ProbeFailed) when no answer came
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

// Suspicion checks the evidence about one node. It does no I/O and reads
// no clock: time comes in the inputs.
type Suspicion struct {
	cfg        ProbeConfig
	phase      SuspectPhase
	probe      uint64 // the probe out now (0: none); numbers only grow
	attempt    int    // attempts made in this round
	source     string
	quietUntil time.Time
}

// NewSuspicion returns an idle Suspicion.
func NewSuspicion(cfg ProbeConfig) *Suspicion { return &Suspicion{cfg: cfg} }

// Phase returns the current phase.
func (s *Suspicion) Phase() SuspectPhase { return s.phase }

// Step takes one input and returns the effects. A result for a probe
// other than the one out is stale and changes nothing. On error nothing
// changes.
func (s *Suspicion) Step(in SuspectInput) (SuspectEffects, error) {
	next := *s
	eff, err := next.step(in)
	if err != nil {
		return SuspectEffects{}, err
	}
	if !canSuspect(s.phase, next.phase) {
		return SuspectEffects{}, fmt.Errorf("%w: suspicion %s -> %s on %T", ErrIllegalStatusTransition, s.phase, next.phase, in)
	}
	*s = next
	return eff, nil
}

func (s *Suspicion) step(in SuspectInput) (SuspectEffects, error) {
	switch m := in.(type) {
	case Evidence:
		if m.At.IsZero() {
			return SuspectEffects{}, fmt.Errorf("%w: zero time", ErrInvalidStatusInput)
		}
		return s.onEvidence(m), nil
	case ProbeAnswered:
		return s.onAnswer(m.At, m.Probe)
	case ProbeFailed:
		return s.onFailed(m.At, m.Probe)
	case Alive:
		return s.onAnswer(m.At, s.probe)
	default:
		return SuspectEffects{}, fmt.Errorf("%w: %T", ErrInvalidStatusInput, in)
	}
}

// onEvidence starts a round of probes, unless one runs or the node
// answered less than Quiet ago.
func (s *Suspicion) onEvidence(m Evidence) SuspectEffects {
	if s.phase == SuspectProbing || (s.phase == SuspectQuiet && m.At.Before(s.quietUntil)) {
		return SuspectEffects{}
	}
	s.phase, s.source, s.attempt = SuspectProbing, m.Source, 1
	s.probe++
	return SuspectEffects{Probe: s.probe, Source: s.source}
}

// onAnswer ends a round: the node is alive. Outside a round (an Alive
// while idle or quiet) nothing changes.
func (s *Suspicion) onAnswer(at time.Time, probe uint64) (SuspectEffects, error) {
	if at.IsZero() {
		return SuspectEffects{}, fmt.Errorf("%w: zero time", ErrInvalidStatusInput)
	}
	if s.phase != SuspectProbing || probe != s.probe {
		return SuspectEffects{}, nil
	}
	eff := SuspectEffects{Refuted: true, Source: s.source}
	s.phase, s.quietUntil, s.source = SuspectQuiet, at.Add(s.cfg.Quiet), ""
	s.probe++ // a late result of the probe that was out is stale
	return eff, nil
}

// onFailed sends the next attempt, or, after the last, confirms.
func (s *Suspicion) onFailed(at time.Time, probe uint64) (SuspectEffects, error) {
	if at.IsZero() {
		return SuspectEffects{}, fmt.Errorf("%w: zero time", ErrInvalidStatusInput)
	}
	if s.phase != SuspectProbing || probe != s.probe {
		return SuspectEffects{}, nil
	}
	s.probe++
	if s.attempt < s.cfg.attempts() {
		s.attempt++
		return SuspectEffects{Probe: s.probe, ProbeDelay: s.cfg.RetryDelay, Source: s.source}, nil
	}
	eff := SuspectEffects{Unreachable: true, Source: s.source}
	s.phase, s.source, s.attempt = SuspectIdle, "", 0
	return eff, nil
}
