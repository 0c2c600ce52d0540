package alloc

import (
	"context"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// An operator's restart of all tasks (Nomad's alloc restart -all-tasks)
// of a group with prestart tasks runs them again in lifecycle order, as
// Nomad does: the main and poststart tasks are stopped and held
// (holdTask), the prestart tasks run again (a sidecar restarts, the
// others, which finished, start anew), and the task order starts the
// held tasks again (resumeTask) once the prestart tasks are done, the
// poststart ones once the main ones run. A plain restart restarts only
// the running tasks, in place.

// Messages of a restart of all tasks.
type (
	// holdTask stops a running task and keeps it stopped until
	// resumeTask; the sender learns once it is stopped.
	holdTask struct{ Reason string }
	// resumeTask starts a held task again, or a finished one anew.
	resumeTask struct{ Reason string }
)

// restartInOrder reports whether an operator's restart of all tasks runs
// them again in lifecycle order: the group has a prestart task.
func (a *Actor) restartInOrder() bool {
	for _, t := range groupOf(a.alloc).GetTasks() {
		if t.GetLifecycle().GetHook() == hookPrestart {
			return true
		}
	}
	return false
}

// restartAllInOrder restarts every task of pids in lifecycle order: the
// prestart tasks now, the others held for the task order to resume.
func (a *Actor) restartAllInOrder(ctx actor.Context, pids []*actor.PID) {
	const reason = "User requested all tasks to restart"
	var reqs []any
	var rerun []string
	for _, pid := range pids {
		task := taskOf(pid)
		if a.hookOf(task) == hookPrestart {
			if st := a.states[task]; st != nil {
				// Not done (a sidecar: not up) until it ran again; its
				// own report comes later.
				c := proto.Clone(st).(*messages.TaskState)
				c.State = taskPending
				a.states[task] = c
			}
			reqs = append(reqs, &restartAll{Reason: reason})
			continue
		}
		rerun = append(rerun, task)
		reqs = append(reqs, &holdTask{Reason: reason})
	}
	a.order.Rerun(rerun)
	if a.rerun == nil {
		a.rerun = map[string]bool{}
	}
	for _, t := range rerun {
		a.rerun[t] = true
	}
	a.fanOutEach(ctx, pids, reqs)
}

func (a *Actor) hookOf(task string) string {
	for _, t := range groupOf(a.alloc).GetTasks() {
		if t.GetName() == task {
			return t.GetLifecycle().GetHook()
		}
	}
	return hookMain
}

// resumeHeld starts a held task's actor again (the order's turn came);
// false: task is not held.
func (a *Actor) resumeHeld(ctx actor.Context, task string) bool {
	if !a.rerun[task] {
		return false
	}
	delete(a.rerun, task)
	ctx.Send(actor.NewPID(ctx.Self().GetAddress(), ctx.Self().GetId()+"/tasks/"+task), &resumeTask{Reason: "Prestart tasks ran again"})
	return true
}

// fanOutEach asks each task actor of pids with its own request, as fanOut.
func (a *Actor) fanOutEach(ctx actor.Context, pids []*actor.PID, reqs []any) {
	root := ctx.ActorSystem().Root
	actors.Reply(ctx, func(c context.Context) any {
		futures := make([]*actor.Future, len(pids))
		for i, pid := range pids {
			futures[i] = root.RequestFuture(pid, reqs[i], opTimeout)
		}
		return gather(c, pids, futures)
	})
}

// gather waits for the task actors' answers: the first refusal, or
// success.
func gather(c context.Context, pids []*actor.PID, futures []*actor.Future) *messages.AllocOpResponse {
	for i, f := range futures {
		res, err := f.Result()
		r, _ := res.(*messages.AllocOpResponse)
		if err != nil {
			r = opResponse(fmt.Errorf("%w: no answer: %w", errAllocNotReady, err))
		}
		if e := r.GetError(); e != nil {
			e.Message = fmt.Sprintf("task %s: %s", taskOf(pids[i]), e.GetMessage())
			return r
		}
	}
	if c.Err() != nil {
		return opResponse(errAllocNotReady)
	}
	return opResponse(nil)
}

// onHold stops the running task and keeps it stopped (a dead one stays
// as it is): resumeTask starts it again.
func (a *taskActor) onHold(ctx actor.Context, m *holdTask) {
	if a.phase == taskPhaseDead {
		ctx.Respond(opResponse(nil))
		return
	}
	if a.phase != taskPhaseRunning || a.killing || a.ops.restarting {
		ctx.Respond(opError(messages.CodeInvalid, "%v: %q", errTaskNotRunning, a.spec.Task.GetName()))
		return
	}
	a.become(ctx, taskPhaseRestarting)
	a.ops.holding, a.ops.restarting = true, true
	a.ops.waiters = append(a.ops.waiters, ctx.Sender())
	appendEvent(a.state, newEvent(eventRestartSignaled, m.Reason, a.spec.Clock.Now()))
	a.report(ctx)
	gen := a.gen
	a.stopTask(ctx, func(_ context.Context, _ driver.Driver, _ string, err error) any {
		return &userStopResult{gen: gen, err: err}
	})
}

// holdAfterExit: the held task stopped; it waits, pending, for its turn
// (or starts at once when it came meanwhile).
func (a *taskActor) holdAfterExit(ctx actor.Context) {
	a.ops.restarting = false
	a.state.State = taskPending
	a.answerRestarts(ctx, nil)
	if a.ops.resume {
		a.ops.holding, a.ops.resume = false, false
		a.report(ctx)
		a.start(ctx)
		return
	}
	a.report(ctx)
}

// onResume starts a held task again, a finished one anew.
func (a *taskActor) onResume(ctx actor.Context, m *resumeTask) {
	switch {
	case a.phase == taskPhaseDead:
		a.onRestartAll(ctx, &restartAll{Reason: m.Reason})
	case a.ops.holding && a.ops.restarting: // still stopping: start once it exited
		a.ops.resume = true
	case a.ops.holding:
		a.ops.holding = false
		a.start(ctx)
	}
}
