package alloc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// DefaultSignal is the signal of a SignalAlloc that names none, as
// Nomad's `alloc signal` sends without -s.
const DefaultSignal = "SIGKILL"

// opTimeout bounds how long the alloc actor's worker waits for a task
// actor's answer to an operator's request (a restart waits for the task's
// kill_timeout and its start).
var opTimeout = 2 * time.Minute

// onSignalAlloc sends the signal to the named task, or to every running
// one, through their task actors; a worker gathers their answers and
// answers the sender.
func (a *Actor) onSignalAlloc(ctx actor.Context, m *messages.SignalAlloc) {
	sig := m.GetSignal()
	if sig == "" {
		sig = DefaultSignal
	}
	if _, err := driver.ParseSignal(sig); err != nil {
		ctx.Respond(opResponse(err))
		return
	}
	pids, err := a.opTargets(ctx, m.GetTask(), false)
	if err != nil {
		ctx.Respond(opResponse(err))
		return
	}
	a.fanOut(ctx, pids, &messages.SignalTask{Signal: sig})
}

// onRestartAlloc restarts the named task in place, or every running one
// (AllTasks: every task not dead), through their task actors.
func (a *Actor) onRestartAlloc(ctx actor.Context, m *messages.RestartAlloc) {
	if m.GetAllTasks() && m.GetTask() != "" {
		ctx.Respond(opError(messages.CodeInvalid, "a task name and all tasks exclude each other"))
		return
	}
	pids, err := a.opTargets(ctx, m.GetTask(), m.GetAllTasks())
	if err != nil {
		ctx.Respond(opResponse(err))
		return
	}
	if m.GetAllTasks() && a.order != nil && a.restartInOrder() {
		a.restartAllInOrder(ctx, pids)
		return
	}
	if m.GetAllTasks() {
		a.fanOut(ctx, pids, &restartAll{Reason: "User requested all tasks to restart"})
		return
	}
	reason := "User requested task to restart"
	if m.GetTask() == "" {
		reason = "User requested running tasks to restart"
	}
	a.fanOut(ctx, pids, &messages.RestartTask{Reason: reason})
}

// restartAll is an operator's restart of every task (Nomad's
// -all-tasks): a running task restarts in place as for RestartTask, and
// one that already finished (a batch task that exited 0 beside a running
// one) runs again; both are counted against nothing.
type restartAll struct{ Reason string }

// opTargets are the task actors an operator's request goes to: the named
// task's, else those of the running tasks (all: of every task, the dead
// ones too while the allocation runs; once every task is dead the
// allocation is torn down and nothing restarts).
func (a *Actor) opTargets(ctx actor.Context, task string, all bool) ([]*actor.PID, error) {
	if a.alloc == nil {
		return nil, errAllocNotReady
	}
	if task != "" && !slices.Contains(a.tasks, task) {
		return nil, fmt.Errorf("%w %q in allocation %s", errUnknownTask, task, a.alloc.GetID())
	}
	live := map[string]*actor.PID{}
	prefix := ctx.Self().GetId() + "/tasks/"
	for _, pid := range ctx.Children() {
		if name, ok := strings.CutPrefix(pid.GetId(), prefix); ok {
			live[name] = pid
		}
	}
	if len(live) == 0 {
		return nil, errAllocNotReady
	}
	var pids []*actor.PID
	for _, t := range a.tasks {
		st := a.states[t].GetState()
		again := st != taskDead || a.life.Phase() == phaseRunning
		wanted := t == task || (task == "" && (st == taskRunning || (all && again)))
		if pid, ok := live[t]; ok && wanted {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		what := "no task of the allocation is running"
		if task != "" {
			what = fmt.Sprintf("%q", task)
		}
		return nil, fmt.Errorf("%w: %s", errTaskNotRunning, what)
	}
	return pids, nil
}

// fanOut asks every task actor in pids with req, in parallel, in a
// worker; the sender gets the first refusal, or success.
func (a *Actor) fanOut(ctx actor.Context, pids []*actor.PID, req any) {
	root := ctx.ActorSystem().Root
	actors.Reply(ctx, func(c context.Context) any {
		futures := make([]*actor.Future, len(pids))
		for i, pid := range pids {
			futures[i] = root.RequestFuture(pid, req, opTimeout)
		}
		return gather(c, pids, futures)
	})
}

// taskOf names the task of a task actor's PID.
func taskOf(pid *actor.PID) string {
	id := pid.GetId()
	return id[strings.LastIndex(id, "/")+1:]
}

// opResponse answers an operator's request: err nil is success; the
// package's refusals keep their code, a task actor's messages.Error its
// own, anything else is internal.
func opResponse(err error) *messages.AllocOpResponse {
	if err == nil {
		return &messages.AllocOpResponse{}
	}
	code := messages.CodeInternal
	switch {
	case errors.Is(err, errUnknownTask):
		code = messages.CodeNotFound
	case errors.Is(err, errTaskNotRunning), errors.Is(err, driver.ErrUnknownSignal):
		code = messages.CodeInvalid
	case errors.Is(err, errAllocNotReady):
		code = messages.CodeUnavailable
	}
	return &messages.AllocOpResponse{Error: messages.NewError(code, err.Error())}
}

// opError is a refusal with a code, in a response.
func opError(code messages.ErrorCode, format string, args ...any) *messages.AllocOpResponse {
	return &messages.AllocOpResponse{Error: messages.Errorf(code, format, args...)}
}
