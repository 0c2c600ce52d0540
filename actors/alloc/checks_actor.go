package alloc

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
)

// checkActor runs one service check (client/allocs/<id>/checks/<check>):
// a probe every Interval on the injected clock, each in a worker, one at
// a time; every outcome goes to the alloc actor (checkResult), and so
// does a restart that check_restart asks for (checkRestart).
type checkActor struct {
	actors.Lifetime
	spec    *checkSpec
	clock   actors.Clock
	script  scriptRunner
	tracker *checkTracker
	log     *slog.Logger

	timer    actors.Timer
	seq      int
	inFlight bool
}

// Messages of the check actor and to its alloc actor.
type (
	checkTick struct{ seq int }
	probed    struct{ o checkOutcome }
	// checkResult is a check's latest outcome, for the alloc actor.
	checkResult struct {
		spec   *checkSpec
		status string
		o      checkOutcome
	}
	// checkRestart asks the alloc actor to restart a check's task.
	checkRestart struct {
		task, check string
	}
)

func newCheckActor(spec *checkSpec, clock actors.Clock, script scriptRunner, log *slog.Logger) actor.Producer {
	return func() actor.Actor {
		return &checkActor{spec: spec, clock: clock, script: script, log: log.With("check", spec.Name)}
	}
}

// Receive dispatches.
func (c *checkActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		c.tracker = newCheckTracker(c.spec.Limit, c.spec.Grace, c.spec.IgnoreWarnings, c.clock.Now())
		c.onTick(ctx, &checkTick{seq: c.seq})
	case *checkTick:
		c.onTick(ctx, m)
	case *probed:
		c.onProbed(ctx, m)
	case *actor.Stopping, *actor.Restarting:
		c.stopTimer()
	case *actor.Stopped, *actor.Terminated:
	default:
		c.log.Warn("check actor: unexpected message", "type", fmt.Sprintf("%T", m))
	}
}

func (c *checkActor) onTick(ctx actor.Context, m *checkTick) {
	if m.seq != c.seq || c.inFlight {
		return
	}
	c.timer = nil
	c.inFlight = true
	spec, script, now := c.spec, c.script, c.clock.Now
	actors.Go(ctx, func(life context.Context) any {
		return &probed{o: probe(life, spec, script, now)}
	})
}

func (c *checkActor) onProbed(ctx actor.Context, m *probed) {
	c.inFlight = false
	status, restart := c.tracker.Step(m.o)
	ctx.Send(ctx.Parent(), &checkResult{spec: c.spec, status: status, o: m.o})
	if restart {
		c.log.Info("check failed check_restart.limit times: restarting its task", "task", c.spec.Task, "limit", c.spec.Limit)
		ctx.Send(ctx.Parent(), &checkRestart{task: c.spec.Task, check: c.spec.Name})
	}
	c.arm(ctx)
}

func (c *checkActor) arm(ctx actor.Context) {
	c.stopTimer()
	c.seq++
	self, root, seq := ctx.Self(), ctx.ActorSystem().Root, c.seq
	c.timer = c.clock.AfterFunc(c.spec.Interval, func() { root.Send(self, &checkTick{seq: seq}) })
}

func (c *checkActor) stopTimer() {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
}
