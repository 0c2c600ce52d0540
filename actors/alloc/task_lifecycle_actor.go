package alloc

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/messages"
)

// startTasks starts the task lifecycle: tasks that ran before (restored
// with a state) are spawned again, the others get a pending state with
// a Received event, as Nomad shows them, and start when their turn comes.
func (a *Actor) startTasks(ctx actor.Context) {
	a.order = newTaskOrder(groupOf(a.alloc).GetTasks())
	a.resumed = map[string]bool{}
	for _, t := range a.tasks {
		if a.states[t] != nil {
			a.resumed[t] = true
			continue
		}
		st := &messages.TaskState{State: taskPending}
		appendEvent(st, newEvent(eventReceived, "", a.spec.Clock.Now()))
		a.states[t] = st
	}
	a.advance(ctx)
}

// advance asks the task order what to do now and does it, until nothing
// is left: a task that cannot start, or a kill, may let others start or
// be skipped. A step inside it (a kill) asks again instead of recursing.
func (a *Actor) advance(ctx actor.Context) {
	if a.order == nil {
		return
	}
	if a.advancing {
		a.again = true
		return
	}
	a.advancing = true
	defer func() { a.advancing = false }()
	for range 2*len(a.tasks) + 2 { // each task starts or is skipped once
		a.again = false
		s := a.order.Next(a.states, a.resumed)
		a.resumed = nil
		now := a.spec.Clock.Now()
		for _, t := range s.Skip {
			st := a.states[t]
			if st == nil {
				st = &messages.TaskState{}
			}
			st.State = taskDead
			appendEvent(st, newEvent(eventKilled, a.killReason, now))
			a.states[t] = st
			a.spec.DB.PutTaskState(a.alloc.GetID(), t, st)
		}
		for _, t := range s.Start {
			if a.resumeHeld(ctx, t) {
				continue
			}
			if !a.spawnTask(ctx, t) {
				a.spec.DB.PutTaskState(a.alloc.GetID(), t, a.states[t])
				a.step(ctx, taskDied{Task: t, Failed: a.states[t].GetFailed(), Leader: a.isLeader(t)})
			}
		}
		if s.MainDead {
			a.step(ctx, taskDied{MainDead: true})
		}
		if s.empty() && !a.again {
			return
		}
	}
}
