package alloc

import (
	"context"
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// Task event types of an operator's requests, as Nomad names them.
const (
	eventSignaling       = "Signaling"
	eventRestartSignaled = "Restart Signaled"
)

// userOps is what a task actor keeps of an operator's restart (Nomad's
// alloc restart): while restarting, the next exit of the task starts it
// again at once, in the same allocation and its directories, and the
// restart policy counts nothing; waiters are answered once it runs again.
type userOps struct {
	restarting bool
	waiters    []*actor.PID
}

// Worker results of the operator's requests.
type (
	signalResult struct {
		sender *actor.PID
		err    error
	}
	userStopResult struct {
		gen int
		err error
	}
)

// onOp dispatches an operator's request and its workers' results.
func (a *taskActor) onOp(ctx actor.Context, msg any) {
	switch m := msg.(type) {
	case *messages.SignalTask:
		a.onSignal(ctx, m)
	case *signalResult:
		a.onSignalResult(ctx, m)
	case *messages.RestartTask:
		a.onRestart(ctx, m)
	case *userStopResult:
		a.onUserStopResult(ctx, m)
	}
}

// onSignal records Nomad's Signaling event and sends the signal in a
// worker; the driver's answer goes back to the sender.
func (a *taskActor) onSignal(ctx actor.Context, m *messages.SignalTask) {
	if a.phase != taskPhaseRunning {
		ctx.Respond(opError(messages.CodeInvalid, "%v: %q", errTaskNotRunning, a.spec.Task.GetName()))
		return
	}
	sig := m.GetSignal()
	ev := newEvent(eventSignaling, fmt.Sprintf("Task being sent signal %s", sig), a.spec.Clock.Now())
	ev.Details = map[string]string{"signal": sig}
	appendEvent(a.state, ev)
	a.report(ctx)
	drv, id, sender := a.spec.Driver, a.spec.Start.ID, ctx.Sender()
	actors.Go(ctx, func(c context.Context) any {
		return &signalResult{sender: sender, err: drv.SignalTask(c, id, sig)}
	})
}

func (a *taskActor) onSignalResult(ctx actor.Context, m *signalResult) {
	if m.err != nil {
		a.log.Warn("signalling the task failed", "error", m.err)
	}
	if m.sender != nil {
		ctx.Send(m.sender, opResponse(m.err))
	}
}

// onRestart stops the running task to start it again (onExit sees
// ops.restarting); a restart already under way takes the sender as one
// more waiter.
func (a *taskActor) onRestart(ctx actor.Context, m *messages.RestartTask) {
	if a.ops.restarting {
		a.ops.waiters = append(a.ops.waiters, ctx.Sender())
		return
	}
	if a.phase != taskPhaseRunning || a.killing {
		ctx.Respond(opError(messages.CodeInvalid, "%v: %q", errTaskNotRunning, a.spec.Task.GetName()))
		return
	}
	a.become(ctx, taskPhaseRestarting)
	a.ops.restarting = true
	a.ops.waiters = append(a.ops.waiters, ctx.Sender())
	reason := m.GetReason()
	if reason == "" {
		reason = "User requested task to restart"
	}
	appendEvent(a.state, newEvent(eventRestartSignaled, reason, a.spec.Clock.Now()))
	a.report(ctx)
	gen := a.gen
	a.stopTask(ctx, func(_ context.Context, _ driver.Driver, _ string, err error) any {
		return &userStopResult{gen: gen, err: err}
	})
}

// onUserStopResult: the stop of a restart failed, so the task still runs
// and no exit will come: it runs on, and the waiters learn why.
func (a *taskActor) onUserStopResult(ctx actor.Context, m *userStopResult) {
	if m.err == nil || errors.Is(m.err, driver.ErrTaskNotFound) || m.gen != a.gen ||
		!a.ops.restarting || a.phase != taskPhaseRestarting {
		return
	}
	a.log.Error("stopping the task to restart it failed", "error", m.err)
	a.ops.restarting = false
	a.become(ctx, taskPhaseRunning)
	a.answerRestarts(ctx, fmt.Errorf("stopping the task to restart it: %w", m.err))
}

// restartInPlace starts the task again after the exit a restart asked
// for; the restart policy does not see it.
func (a *taskActor) restartInPlace(ctx actor.Context) {
	a.ops.restarting = false
	a.state.State = taskPending
	a.report(ctx)
	a.start(ctx)
}

// answerRestarts answers every waiter of a restart (err nil: the task
// runs again).
func (a *taskActor) answerRestarts(ctx actor.Context, err error) {
	for _, w := range a.ops.waiters {
		if w != nil {
			ctx.Send(w, opResponse(err))
		}
	}
	a.ops.waiters = nil
}
