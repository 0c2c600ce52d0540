package scheduler

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
)

// The evaluations that wait in the broker: for their WaitUntil, a
// refused plan's backoff (hold) or a failed commit's retry. Each has one
// timer of the injected clock in Actor.timers, and the entry lives
// exactly as long as the wait: it goes when the timer fires, when the
// evaluation ends elsewhere (EvalsEnded) and when its plan is answered,
// so len(timers) is Nomad's nomad.nomad.broker.total_waiting.

// EvalsEnded tells the scheduler that evaluations were stored with a
// terminal status (complete, failed, canceled): one still waiting waits
// no more.
type EvalsEnded struct{ IDs []string }

// waitOver is a wait's timer firing; seq tells it from an older timer
// of the same evaluation that was stopped after it fired.
type waitOver struct {
	evalID string
	seq    uint64
}

// waiting is one evaluation's wait.
type waiting struct {
	timer actors.Timer
	seq   uint64
}

// delay plans the evaluation id again after wait, unless it waits
// already.
func (a *Actor) delay(ctx actor.Context, id string, wait time.Duration) {
	if _, ok := a.timers[id]; ok {
		return
	}
	a.waitSeq++
	seq, self, root := a.waitSeq, ctx.Self(), ctx.ActorSystem().Root
	a.timers[id] = waiting{seq: seq, timer: a.spec.Clock.AfterFunc(wait, func() { root.Send(self, &waitOver{evalID: id, seq: seq}) })}
}

// onWaitOver ends a wait and queues its evaluation (plan looks whether
// it is still pending and due).
func (a *Actor) onWaitOver(ctx actor.Context, m *waitOver) {
	if w, ok := a.timers[m.evalID]; !ok || w.seq != m.seq {
		return // stopped: the evaluation ended, or waits on a newer timer
	}
	delete(a.timers, m.evalID)
	a.enqueue(ctx, m.evalID)
}

// onEvalsEnded drops the waits (and refusal holds) of evaluations that
// ended.
func (a *Actor) onEvalsEnded(m *EvalsEnded) {
	for _, id := range m.IDs {
		a.unwait(id)
		delete(a.hold, id)
	}
}

// unwait stops id's wait, if it has one.
func (a *Actor) unwait(id string) {
	if w, ok := a.timers[id]; ok {
		w.timer.Stop()
		delete(a.timers, id)
	}
}

// stopWaits stops every wait (the actor stops).
func (a *Actor) stopWaits() {
	for id := range a.timers {
		a.unwait(id)
	}
}
