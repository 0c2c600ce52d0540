package server

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
)

// gcTick is the collector's timer, a message to itself.
type gcTick struct{}

// gcDone is a collection's result, from the collector's worker.
type gcDone struct {
	totals GCTotals
	err    error
}

// GCActor is the leader's garbage collector ("server/gc"): every
// GCConfig.Interval on the injected clock it decides on the current state
// (DecideGC) and proposes the purges in a worker, one collection at a
// time. It keeps no truth of its own: a new leader starts a new one.
type GCActor struct {
	actors.Lifetime
	spec    *Spec
	log     *slog.Logger
	timer   actors.Timer
	running bool
}

func newGC(sp *Spec) actor.Producer {
	return func() actor.Actor { return &GCActor{spec: sp, log: sp.Logger.With("actor", "gc")} }
}

// Receive dispatches.
func (g *GCActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		g.schedule(ctx)
	case *gcTick:
		g.onTick(ctx)
	case *gcDone:
		g.onDone(ctx, m)
	case *actor.Stopping:
		g.stopTimer()
	case *actor.Stopped, *actor.Restarting, *actor.Terminated:
	default:
		g.log.Warn("gc actor: unexpected message", "type", fmt.Sprintf("%T", m))
	}
}

func (g *GCActor) schedule(ctx actor.Context) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	g.timer = g.spec.Clock.AfterFunc(g.spec.GC.withDefaults().Interval, func() { root.Send(self, &gcTick{}) })
}

func (g *GCActor) stopTimer() {
	if g.timer != nil {
		g.timer.Stop()
	}
}

func (g *GCActor) onTick(ctx actor.Context) {
	if g.running {
		return
	}
	sp := g.spec
	now := sp.Clock.Now()
	snap, ok := sp.State().(GCState)
	if !ok {
		g.schedule(ctx)
		return
	}
	g.running = true
	actors.Go(ctx, func(c context.Context) any {
		t, err := CollectGarbage(c, sp.Proposer, snap, sp.GC.Cutoffs(now, false), sp.GC.withDefaults().JobVersions, now)
		return &gcDone{totals: t, err: err}
	})
}

func (g *GCActor) onDone(ctx actor.Context, m *gcDone) {
	g.running = false
	switch {
	case m.err != nil:
		g.log.Warn("garbage collection", "error", m.err)
	case m.totals.Index > 0:
		g.log.Info("garbage collected", "jobs", m.totals.Jobs, "evals", m.totals.Evals,
			"allocs", m.totals.Allocs, "nodes", m.totals.Nodes, "plugins", m.totals.Plugins, "versions", m.totals.Versions)
	}
	g.schedule(ctx)
}
