package agent

import (
	"context"
	"errors"
	"time"

	"github.com/troupe-dev/troupe/cluster"
	"github.com/troupe-dev/troupe/messages"
)

// leaderPoll is how often a request that waits for a leader looks again.
const leaderPoll = 10 * time.Millisecond

// readyLeader reports whether this server leads and has finished the
// barrier of its term (watchLeadership): its store then holds every entry
// committed before its election, so it can answer a consistent read. A
// restarted server's store holds only its last snapshot until then.
func (a *Agent) readyLeader() bool {
	if a.raft == nil || !a.raft.IsLeader() {
		return false
	}
	term := a.readyTerm.Load()
	return term != 0 && term == a.raft.CurrentTerm()
}

// holdTimeout is how long a request waits for a leader.
func (a *Agent) holdTimeout() time.Duration {
	if a.cfg.RPCHoldTimeout > 0 {
		return a.cfg.RPCHoldTimeout
	}
	return DefaultRPCHoldTimeout
}

// AwaitLeader waits, at most the hold timeout, until a consistent read
// can be answered: here when this server is a ready leader (elsewhere is
// ""), or by the leader at elsewhere (its HTTP address) when another
// server leads, unless that is unreachable (a leader the caller could not
// reach: raft here names a killed leader until its heartbeat times out).
// It answers an error that is ErrNoLeader when none came in time. A
// client-only agent has nothing to wait for.
func (a *Agent) AwaitLeader(ctx context.Context, unreachable string) (elsewhere string, err error) {
	if a.raft == nil {
		return "", nil
	}
	err = a.holdFor(ctx, func() bool {
		if a.readyLeader() {
			elsewhere = ""
			return true
		}
		elsewhere = a.LeaderHTTP()
		return elsewhere != "" && elsewhere != unreachable
	})
	if err != nil {
		elsewhere = ""
	}
	return elsewhere, err
}

// LastContact is how long ago this server last heard from the leader (0
// on the leader) and whether a leader is known, for X-Nomad-LastContact
// and X-Nomad-KnownLeader.
func (a *Agent) LastContact() (since time.Duration, known bool) {
	if a.raft == nil {
		return 0, false
	}
	if a.raft.IsLeader() {
		return 0, true
	}
	addr, _ := a.raft.Leader()
	last := a.raft.LastContact()
	if last.IsZero() {
		return 0, addr != ""
	}
	return max(0, a.clock.Now().Sub(last)), addr != ""
}

// applyPatiently proposes cmd here when this server leads, or forwards it
// to the leader; while there is none it waits (at most the hold timeout),
// as Nomad holds an RPC that finds no leader. A forward the leader never
// received (undelivered: it died, and raft here still names it) waits for
// raft to name another leader and goes there.
func (a *Agent) applyPatiently(ctx context.Context, cmd *messages.Command) (any, uint64, error) {
	hold, cancel := context.WithTimeout(ctx, a.holdTimeout())
	defer cancel()
	unreachable := ""
	for {
		var forward string
		err := a.holdFor(hold, func() bool {
			forward = ""
			if a.raft.IsLeader() {
				return true
			}
			if a.transport != nil {
				forward = a.leaderRPCAddr()
			}
			return forward != "" && forward != unreachable
		})
		if err != nil {
			return nil, 0, err
		}
		var (
			out   any
			index uint64
		)
		if forward != "" {
			out, index, err = a.forwardApply(ctx, forward, cmd)
		} else {
			out, index, err = a.raft.Apply(ctx, cmd)
		}
		switch {
		// Leadership moved before the command was taken: it did not
		// commit, so it is safe to try again with the next leader.
		case (errors.Is(err, cluster.ErrNotLeader) || errors.Is(err, ErrNoLeader)) && hold.Err() == nil:
			continue
		// Even past the hold timeout: the transport gives up on a dead
		// leader only after its connect attempts (seconds), by when a new
		// leader is often there; holdFor answers ErrNoLeader if none is.
		case undelivered(err) && ctx.Err() == nil:
			a.log.Debug("forward to the leader undelivered, waiting for another", "leader", forward, "error", err)
			unreachable = forward
			continue
		}
		return out, index, err
	}
}

// holdFor polls ready until it holds, ctx ends or the hold timeout passes
// (an error that is ErrNoLeader then), or the agent stops.
func (a *Agent) holdFor(ctx context.Context, ready func() bool) error {
	if ready() {
		return nil
	}
	hold, cancel := context.WithTimeout(ctx, a.holdTimeout())
	defer cancel()
	for {
		tick := make(chan struct{})
		t := a.clock.AfterFunc(leaderPoll, func() { close(tick) })
		select {
		case <-tick:
		case <-hold.Done():
			t.Stop()
			if ready() {
				return nil
			}
			return &noLeaderError{cause: hold.Err()}
		case <-a.stop:
			t.Stop()
			return &noLeaderError{cause: errAgentStopping}
		}
		if ready() {
			return nil
		}
	}
}
