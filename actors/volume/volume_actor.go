package volume

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// Actor is the leader's actor for one volume ("server/volumes/v/<id>"):
// it steps a volumeState one input at a time and carries out the effects.
// While a step's proposals are committed (in a worker, in order) it keeps
// further messages and handles them after, in order; then it submits the
// step's controller ops to the plugin's controller actor, arms the retry
// timers, answers the waiters and logs the transitions and failures. A
// failed commit answers every waiter with the error and rebuilds the state
// from the stored volume; a Resume follows after a backoff.
type Actor struct {
	actors.Lifetime // ends the workers on stop
	spec            *ManagerSpec
	id              string
	initial         *messages.CSIVolume // the first start of a rebuild: the volume pendingOps saw
	queued          map[string]bool     // OpKeys the controller queue was rebuilt with
	s               *volumeState
	busy            bool       // proposals being committed
	stash           []envelope // messages that came while busy
	waiters         map[string][]*actor.PID
	timers          map[string]actors.Timer
	failedAt        map[string]time.Time // first failed unpublish per alloc
	secrets         map[string]string    // extra secrets of the delete under way
	fails           int                  // failed commits in a row
	resume          actors.Timer
	cancel          context.CancelFunc // of the commit in flight
	gone            bool
	log             *slog.Logger
}

// Volume actor messages to itself.
type (
	// committed is a step's commit, from the worker; owner guards against
	// a late result of a previous actor under the same name.
	committed struct {
		owner *Actor
		eff   effects
		index uint64
		err   error
		done  doneFunc
	}
	retryDue  struct{ AllocID string }
	resumeDue struct{}
)

func newVolumeActor(spec *ManagerSpec, id string, initial *messages.CSIVolume, queued map[string]bool) actor.Producer {
	var started atomic.Bool
	return func() actor.Actor {
		a := &Actor{spec: spec, id: id, waiters: map[string][]*actor.PID{}, timers: map[string]actors.Timer{},
			failedAt: map[string]time.Time{}, log: spec.Logger.With("volume", id)}
		if started.CompareAndSwap(false, true) { // a restart reads the state afresh
			a.initial, a.queued = initial, queued
		}
		return a
	}
}

// Phase names the actor's state for the actor tree.
func (a *Actor) Phase() string {
	switch {
	case a.busy:
		return "proposing"
	case a.s != nil && a.s.InFlight() != nil:
		return "waiting-controller"
	}
	return "idle"
}

// Receive dispatches; while proposals commit, messages wait their turn.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.onStarted(ctx)
	case *committed:
		a.onCommitted(ctx, m)
	case *actor.Stopping, *actor.Restarting:
		a.onStopping(ctx)
	case *actor.Stopped, *actor.Terminated:
	default:
		if a.busy || a.gone || a.s == nil || len(a.stash) > 0 {
			a.stash = append(a.stash, envelope{msg: m, sender: ctx.Sender()})
			return
		}
		a.handle(ctx, m, ctx.Sender())
	}
}

func (a *Actor) handle(ctx actor.Context, msg any, sender *actor.PID) {
	switch m := msg.(type) {
	case *messages.VolumeClaimRequest:
		a.onClaim(ctx, m, sender)
	case *messages.VolumeNodeDetachedRequest:
		a.onNodeDetached(ctx, m, sender)
	case *messages.VolumeOpRequest:
		a.onOp(ctx, m, sender)
	case *stepInput:
		a.run(ctx, m.In, nil)
	case *retryDue:
		delete(a.timers, m.AllocID)
		a.run(ctx, RetryDue{AllocID: m.AllocID}, nil)
	case *resumeDue:
		a.resume = nil
		a.run(ctx, resume{}, nil)
	case *resubmit:
		if op := a.s.InFlight(); op != nil {
			a.submit(ctx, op)
		}
	case *volumeGone:
		a.gone = true
		ctx.Stop(ctx.Self())
	default:
		a.log.Warn("volume actor: unexpected message", "type", fmt.Sprintf("%T", m))
	}
}

// onStarted builds the state from the stored volume (the rebuild's copy
// on the first start) and resumes the claims mid-way.
func (a *Actor) onStarted(ctx actor.Context) {
	vol := a.initial
	a.initial = nil
	if vol == nil {
		vol = a.spec.State().CSIVolumeAnyNamespace(a.id)
	}
	if vol == nil {
		a.gone = true
		ctx.Stop(ctx.Self())
		return
	}
	a.s = newVolumeState(vol)
	a.run(ctx, resume{}, nil)
}

// run steps in and carries out the effects; done (optional) is called
// after the proposals committed and the effects were carried out, or with
// the error that refused the input or failed the commit.
func (a *Actor) run(ctx actor.Context, in input, done doneFunc) {
	e, err := a.s.Step(in)
	if err != nil {
		a.queued = nil
		if done != nil {
			done(ctx, 0, err)
		} else if !errors.Is(err, errDeregistered) && !errors.Is(err, errUnexpectedResult) {
			a.log.Warn("volume input refused", "input", fmt.Sprintf("%T", in), "error", err)
		} else {
			a.log.Debug("volume input ignored", "input", fmt.Sprintf("%T", in), "error", err)
		}
		return
	}
	if len(e.Propose) == 0 {
		a.carryOut(ctx, e, 0)
		if done != nil {
			done(ctx, 0, nil)
		}
		return
	}
	a.busy = true
	now := a.spec.Clock.Now().UnixNano()
	cmds := make([]*messages.Command, len(e.Propose))
	for i, p := range e.Propose {
		cmds[i] = command(p, now)
	}
	c, cancel := context.WithTimeout(a.Context(), proposeTimeout)
	a.cancel = cancel
	prop := a.spec.Proposer
	actors.Go(ctx, func(_ context.Context) any {
		defer cancel()
		var index uint64
		for _, cmd := range cmds {
			_, i, err := prop.Apply(c, cmd)
			if err != nil {
				return &committed{owner: a, eff: e, index: index, err: err, done: done}
			}
			index = i
		}
		return &committed{owner: a, eff: e, index: index, done: done}
	})
}

// command is the raft command of a proposal.
func command(p proposal, now int64) *messages.Command {
	cmd := &messages.Command{Time: now}
	switch {
	case p.Claim != nil:
		cmd.Cmd = &messages.Command_ClaimVolume{ClaimVolume: p.Claim}
	case p.UpdateClaim != nil:
		cmd.Cmd = &messages.Command_UpdateClaimState{UpdateClaimState: p.UpdateClaim}
	case p.Deregister != nil:
		cmd.Cmd = &messages.Command_DeregisterVolume{DeregisterVolume: p.Deregister}
	}
	return cmd
}

func (a *Actor) onCommitted(ctx actor.Context, c *committed) {
	if c.owner != a {
		a.log.Debug("late commit of a previous actor ignored")
		return
	}
	a.busy, a.cancel = false, nil
	if c.err != nil {
		a.commitFailed(ctx, c)
	} else {
		a.fails = 0
		a.carryOut(ctx, c.eff, c.index)
		if c.done != nil {
			c.done(ctx, c.index, nil)
		}
	}
	for !a.busy && !a.gone && len(a.stash) > 0 {
		env := a.stash[0]
		a.stash = a.stash[1:]
		a.handle(ctx, env.msg, env.sender)
	}
}

// commitFailed answers every waiter with the error and rebuilds the state
// from the stored volume; a Resume comes after a backoff (the leader may
// be gone: no hot loop).
func (a *Actor) commitFailed(ctx actor.Context, c *committed) {
	a.fails++
	a.queued = nil
	a.log.Error("committing volume changes failed", "error", c.err, "failures", a.fails)
	err := fmt.Errorf("volume %q: committing: %w", a.id, c.err)
	for alloc := range a.waiters {
		a.answerAll(ctx, alloc, nil, err, 0)
	}
	if c.done != nil {
		c.done(ctx, c.index, err)
	}
	for alloc, t := range a.timers {
		t.Stop()
		delete(a.timers, alloc)
	}
	vol := a.spec.State().CSIVolumeAnyNamespace(a.id)
	if vol == nil {
		a.gone = true
		ctx.Stop(ctx.Self())
		return
	}
	a.s, a.failedAt = newVolumeState(vol), map[string]time.Time{}
	if a.resume == nil {
		d, ok := a.spec.Retry.Delay(a.fails, 0)
		if !ok {
			d = a.spec.Retry.Max
		}
		self, root := ctx.Self(), ctx.ActorSystem().Root
		a.resume = a.spec.Clock.AfterFunc(d, func() { root.Send(self, &resumeDue{}) })
	}
}

// carryOut does what a committed step asks, in order: controller ops,
// retry timers, replies, logs.
func (a *Actor) carryOut(ctx actor.Context, e effects, index uint64) {
	for _, op := range e.Controller {
		a.submit(ctx, op)
	}
	a.queued = nil // only the first Resume's ops were in the rebuilt queue
	for _, r := range e.Retry {
		a.schedule(ctx, r)
	}
	for _, r := range e.Replies {
		a.answerAll(ctx, r.AllocID, r.Claim, r.Err, index)
	}
	for _, t := range e.Transitions {
		a.log.Info("claim state changed", "alloc", t.AllocID, "from", t.From.String(), "to", t.To.String(), "reason", t.Why.String())
		if t.To == state.ClaimFreed {
			delete(a.failedAt, t.AllocID)
		}
	}
	for _, err := range e.Failures {
		a.log.Error("controller operation failed for good; the claim waits for a detach", "error", err)
	}
}

// submit queues op on its plugin's controller actor, through the manager,
// unless the controller queue was rebuilt with it.
func (a *Actor) submit(ctx actor.Context, op *messages.ControllerOp) {
	if a.queued[opKey(op)] {
		delete(a.queued, opKey(op))
		return
	}
	s := &submitOp{Op: op}
	if op.GetKind() == opDeleteVolume {
		s.Secrets = a.secrets
	}
	ctx.Send(ctx.Parent(), s)
}

// schedule arms the RetryDue of a failed controller unpublish; past the
// policy's deadline the claim waits in node-detached for a detach.
func (a *Actor) schedule(ctx actor.Context, r retry) {
	now := a.spec.Clock.Now()
	first, ok := a.failedAt[r.AllocID]
	if !ok || r.Attempt <= 1 {
		first, a.failedAt[r.AllocID] = now, now
	}
	d, ok := a.spec.Retry.Delay(r.Attempt, now.Sub(first))
	if !ok {
		a.log.Error("controller unpublish keeps failing: giving up until an operator detaches the volume",
			"alloc", r.AllocID, "attempts", r.Attempt, "since", first)
		return
	}
	if t := a.timers[r.AllocID]; t != nil {
		t.Stop()
	}
	a.log.Warn("controller unpublish failed, retrying", "alloc", r.AllocID, "attempt", r.Attempt, "in", d)
	self, root, alloc := ctx.Self(), ctx.ActorSystem().Root, r.AllocID
	a.timers[alloc] = a.spec.Clock.AfterFunc(d, func() { root.Send(self, &retryDue{AllocID: alloc}) })
}

func (a *Actor) onStopping(ctx actor.Context) {
	if a.cancel != nil {
		a.cancel()
	}
	for _, t := range a.timers {
		t.Stop()
	}
	if a.resume != nil {
		a.resume.Stop()
	}
	err := fmt.Errorf("volume %q: the volume actor stopped (leadership lost?)", a.id)
	code := messages.CodeUnavailable
	if a.gone {
		err, code = fmt.Errorf("volume %q was deregistered", a.id), messages.CodeNotFound
	}
	for alloc, pids := range a.waiters {
		for _, pid := range pids {
			ctx.Send(pid, failure(a.requestFor(alloc), messages.NewError(code, err.Error())))
		}
	}
	a.waiters = map[string][]*actor.PID{}
	for _, env := range a.stash {
		if isRequest(env.msg) && env.sender != nil {
			ctx.Send(env.sender, failure(env.msg, messages.NewError(code, err.Error())))
		}
	}
	a.stash = nil
}
