package node

import (
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/messages"
)

// SuspectNode tells the leader's node actor that something other than a
// missed heartbeat says its node may be gone (the agent sends it when
// gossip reports the node's member failed). The actor probes the node's
// client actor and takes the node for missed only when every probe fails;
// see Suspicion.
type SuspectNode struct {
	NodeID string
	Source string // what the evidence is, for the log
}

// Log messages of the probe, which the end-to-end tests look for.
const (
	LogProbeRefuted   = "node answered the direct probe: evidence refuted"
	LogProbeConfirmed = "node failed every direct probe: taking it for missed"
	logSuspicionPhase = "node suspicion"
)

var errProbeTimeout = errors.New("no answer within the probe timeout")

// Probe timers and results (messages to self).
type (
	nodeProbeNow    struct{ probe uint64 }
	nodeProbeResult struct {
		probe uint64
		reply any
		err   error
	}
)

// suspicion returns the node's Suspicion, made on first use.
func (s *server) suspicion() *suspicion {
	if s.suspect == nil {
		cfg := s.spec.Probe
		if cfg.Timeout <= 0 {
			cfg = defaultProbeConfig()
		}
		s.suspect = newSuspicion(cfg)
	}
	return s.suspect
}

// onSuspect checks evidence about a node that counts as live. Evidence
// about a node already disconnected or down, or one the leader cannot
// reach to probe, changes nothing: its heartbeat deadline still runs.
func (s *server) onSuspect(ctx actor.Context, m *SuspectNode) {
	if s.status == nil {
		return
	}
	if st := s.status.Status(); st != statusReady && st != statusInitializing {
		return
	}
	if s.clientPID() == nil {
		s.log.Debug("evidence about a node without an RPC address: left to its heartbeat deadline", "source", m.Source)
		return
	}
	s.suspectStep(ctx, evidence{At: s.spec.Clock.Now(), Source: m.Source})
}

func (s *server) clientPID() *actor.PID {
	n := s.spec.State().NodeByID(s.spec.NodeID)
	if n == nil {
		return nil
	}
	return s.spec.ClientPID(n)
}

// suspectStep runs the Suspicion and carries out its effects.
func (s *server) suspectStep(ctx actor.Context, in suspectInput) {
	sus := s.suspicion()
	was := sus.Phase()
	eff, err := sus.Step(in)
	if err != nil {
		s.log.Error("node suspicion", "input", fmt.Sprintf("%T", in), "error", err)
		return
	}
	if now := sus.Phase(); now != was {
		s.log.Info(logSuspicionPhase, "from", was.String(), "to", now.String(), "source", eff.Source)
	}
	switch {
	case eff.Refuted:
		s.stopProbeTimer()
		s.log.Info(LogProbeRefuted, "source", eff.Source)
	case eff.Unreachable:
		s.stopProbeTimer()
		s.log.Warn(LogProbeConfirmed, "source", eff.Source)
		s.step(ctx, unreachable{At: s.spec.Clock.Now()})
	case eff.Probe != 0 && eff.ProbeDelay > 0:
		s.armProbeTimer(ctx, eff.ProbeDelay, &nodeProbeNow{probe: eff.Probe})
	case eff.Probe != 0:
		s.sendProbe(ctx, eff.Probe)
	}
}

func (s *server) onProbeNow(ctx actor.Context, m *nodeProbeNow) { s.sendProbe(ctx, m.probe) }

// sendProbe asks the node's client actor whether it lives. The answer, a
// delivery failure or the probe timeout (on the injected clock, whichever
// comes first) comes back as a nodeProbeResult; the later ones are stale.
func (s *server) sendProbe(ctx actor.Context, probe uint64) {
	timeout := s.suspicion().cfg.Timeout
	pid := s.clientPID()
	if pid == nil {
		s.suspectStep(ctx, probeFailed{At: s.spec.Clock.Now(), Probe: probe, Reason: "the node has no RPC address"})
		return
	}
	s.log.Debug("probing node", "probe", probe, "client", pid.String(), "timeout", timeout)
	s.armProbeTimer(ctx, timeout, &nodeProbeResult{probe: probe, err: errProbeTimeout})
	// The future's own timeout only frees it; the clock's decides.
	f := ctx.RequestFuture(pid, &messages.ProbeNode{NodeID: s.spec.NodeID}, 2*timeout)
	ctx.ReenterAfter(f, func(reply any, err error) {
		s.onProbeResult(ctx, &nodeProbeResult{probe: probe, reply: reply, err: err})
	})
}

// onProbeResult feeds a probe's outcome to the Suspicion. Only an answer
// from this very node counts: another agent at its address is not it.
func (s *server) onProbeResult(ctx actor.Context, m *nodeProbeResult) {
	now := s.spec.Clock.Now()
	r, ok := m.reply.(*messages.ProbeNodeResponse)
	switch {
	case m.err != nil:
		s.suspectStep(ctx, probeFailed{At: now, Probe: m.probe, Reason: m.err.Error()})
	case !ok:
		s.suspectStep(ctx, probeFailed{At: now, Probe: m.probe, Reason: fmt.Sprintf("unexpected reply %T", m.reply)})
	case r.GetNodeID() != s.spec.NodeID:
		s.suspectStep(ctx, probeFailed{At: now, Probe: m.probe, Reason: "answered by node " + r.GetNodeID()})
	default:
		s.suspectStep(ctx, probeAnswered{At: now, Probe: m.probe})
	}
}

// armProbeTimer replaces the probe's timer (the retry delay or the
// timeout: one is pending at a time) with one that sends msg after d.
func (s *server) armProbeTimer(ctx actor.Context, d time.Duration, msg any) {
	s.stopProbeTimer()
	self, root := ctx.Self(), ctx.ActorSystem().Root
	s.probeTimer = s.spec.Clock.AfterFunc(d, func() { root.Send(self, msg) })
}

func (s *server) stopProbeTimer() {
	if s.probeTimer != nil {
		s.probeTimer.Stop()
		s.probeTimer = nil
	}
}
