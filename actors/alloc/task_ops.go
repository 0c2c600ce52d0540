package alloc

import (
	"context"
	"errors"
	"fmt"
	"time"

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
	// reviving: a dead task is to start again (restartAll) once the
	// driver's cleanup of its last run (destroying) is done.
	reviving bool
	// holding: stopped (or stopping) for a restart of all tasks in
	// lifecycle order, until resumeTask (resume: it came while stopping).
	holding, resume bool
	waiters         []*actor.PID
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
	case *restartAll:
		a.onRestartAll(ctx, m)
	case *taskDestroyed:
		a.onDestroyed(ctx)
	case *userStopResult:
		a.onUserStopResult(ctx, m)
	case *holdTask:
		a.onHold(ctx, m)
	case *resumeTask:
		a.onResume(ctx, m)
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

// onRestartAll restarts a running task as onRestart does, and starts a
// dead one again in the same allocation directories (Nomad's restart of
// all tasks, which runs the tasks that already finished too). The restart
// policy counts neither; the waiters are answered once the task runs.
func (a *taskActor) onRestartAll(ctx actor.Context, m *restartAll) {
	if a.phase != taskPhaseDead {
		a.onRestart(ctx, &messages.RestartTask{Reason: m.Reason})
		return
	}
	if a.killing {
		ctx.Respond(opError(messages.CodeInvalid, "%v: %q", errTaskNotRunning, a.spec.Task.GetName()))
		return
	}
	a.ops.waiters = append(a.ops.waiters, ctx.Sender())
	if a.ops.reviving {
		return
	}
	appendEvent(a.state, newEvent(eventRestartSignaled, m.Reason, a.spec.Clock.Now()))
	a.state.State, a.state.Failed, a.state.FinishedAt = taskPending, false, ""
	a.report(ctx)
	if a.destroying {
		a.ops.reviving = true // started once the cleanup is done (onDestroyed)
		return
	}
	a.start(ctx)
}

// onDestroyed: the driver's cleanup of the task's last run is done; a
// revival that waited for it starts the task now.
func (a *taskActor) onDestroyed(ctx actor.Context) {
	a.destroying = false
	if a.ops.reviving && a.phase == taskPhaseDead {
		a.ops.reviving = false
		a.start(ctx)
	}
}

// cancelRevival ends a revival that waits for the cleanup when the task
// is killed meanwhile: it stays dead, and the waiters learn so.
func (a *taskActor) cancelRevival(ctx actor.Context, reason string) {
	a.ops.reviving = false
	a.killing = true
	appendEvent(a.state, newEvent(eventKilling, reason, a.spec.Clock.Now()))
	a.state.State = taskDead
	a.state.FinishedAt = rfc3339(a.spec.Clock.Now())
	a.answerRestarts(ctx, fmt.Errorf("%w: %q", errTaskNotRunning, a.spec.Task.GetName()))
	a.report(ctx)
}

// onUserStopResult: the stop of a restart failed, so the task still runs
// and no exit will come: it runs on, and the waiters learn why.
func (a *taskActor) onUserStopResult(ctx actor.Context, m *userStopResult) {
	if m.err == nil || errors.Is(m.err, driver.ErrTaskNotFound) || m.gen != a.gen ||
		!a.ops.restarting || a.phase != taskPhaseRestarting {
		return
	}
	a.log.Error("stopping the task to restart it failed", "error", m.err)
	a.ops.restarting, a.ops.holding, a.ops.resume = false, false, false
	a.become(ctx, taskPhaseRunning)
	a.answerRestarts(ctx, fmt.Errorf("stopping the task to restart it: %w", m.err))
}

// restartInPlace starts the task again after the exit a restart asked
// for (a held task waits for its turn); the restart policy does not see
// it.
func (a *taskActor) restartInPlace(ctx actor.Context) {
	if a.ops.holding {
		a.holdAfterExit(ctx)
		return
	}
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

// killTimeout is how long a stopping task gets between its kill signal
// and SIGKILL (the task's kill_timeout, 5 s by default).
func (a *taskActor) killTimeout() time.Duration {
	if d := time.Duration(a.spec.Task.GetKillTimeout()); d > 0 {
		return d
	}
	return 5 * time.Second
}
