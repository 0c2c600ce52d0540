package alloc

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// Renewal of identities with a ttl: once the tasks start, the alloc actor
// asks the servers again at half the shortest ttl of the allocation's
// identities (a timer on the injected clock, a message to self), rewrites
// their files and gives the templates the new tokens. A failed renewal is
// tried again after identityRenewRetry. A task's NOMAD_TOKEN stays what it
// started with (Nomad's change_mode is not supported). Renewal ends when
// the actor stops or the allocation is to stop.

// identityRenewRetry is the wait before a failed renewal is tried again.
const identityRenewRetry = 5 * time.Second

type renewal struct {
	started bool
	timer   actors.Timer
	seq     int
}

type (
	// renewDue: renewal timer seq fired.
	renewDue struct{ seq int }
	// identitiesRenewed: a renewal's result.
	identitiesRenewed struct {
		tokens identityTokens
		err    error
	}
)

// shortestTTL is the shortest ttl of al's identity blocks (0: none).
func shortestTTL(al *messages.Allocation) time.Duration {
	var out time.Duration
	for _, t := range groupOf(al).GetTasks() {
		for _, id := range identitiesOf(t) {
			if ttl := time.Duration(id.GetTTL()); ttl > 0 && (out == 0 || ttl < out) {
				out = ttl
			}
		}
	}
	return out
}

// startRenewal schedules the first renewal once the identities are
// signed; it does nothing the second time, or without a ttl.
func (h *identityHook) startRenewal(ctx actor.Context) {
	ttl := shortestTTL(h.a.alloc)
	if h.renew.started || ttl <= 0 || h.tokens.Load() == nil || h.a.spec.Identities == nil {
		return
	}
	h.renew.started = true
	h.scheduleRenew(ctx, ttl/2)
}

func (h *identityHook) scheduleRenew(ctx actor.Context, d time.Duration) {
	h.stopRenewal()
	h.renew.seq++
	self, root, seq := ctx.Self(), ctx.ActorSystem().Root, h.renew.seq
	h.renew.timer = h.a.spec.Clock.AfterFunc(d, func() { root.Send(self, &renewDue{seq: seq}) })
}

// stopRenewal stops the renewal timer.
func (h *identityHook) stopRenewal() {
	if h.renew.timer != nil {
		h.renew.timer.Stop()
		h.renew.timer = nil
	}
}

// onRenewDue signs again in a worker, unless the allocation is to stop.
func (h *identityHook) onRenewDue(ctx actor.Context, m *renewDue) {
	if m.seq != h.renew.seq || h.renew.timer == nil {
		return // a timer stopped or replaced
	}
	h.renew.timer = nil
	if h.a.alloc == nil || h.a.stopWanted() || terminal(h.a.alloc.GetClientStatus()) {
		return
	}
	al := proto.Clone(h.a.alloc).(*messages.Allocation)
	src := h.a.spec.Identities
	actors.Go(ctx, func(c context.Context) any {
		signed, err := src.SignIdentities(c, al.GetID())
		if err != nil {
			return &identitiesRenewed{err: err}
		}
		tokens, err := h.write(al, signed)
		return &identitiesRenewed{tokens: tokens, err: err}
	})
}

// onRenewed keeps the new tokens and schedules the next renewal.
func (h *identityHook) onRenewed(ctx actor.Context, m *identitiesRenewed) {
	if m.err != nil {
		h.a.log.Warn("renewing the workload identities failed; trying again", "error", m.err, "in", identityRenewRetry)
		h.scheduleRenew(ctx, identityRenewRetry)
		return
	}
	h.tokens.Store(&m.tokens)
	h.scheduleRenew(ctx, shortestTTL(h.a.alloc)/2)
}
