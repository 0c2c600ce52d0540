package scheduler

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// TestBrokerWaiting: an evaluation whose WaitUntil is in the future is
// counted waiting (nomad.nomad.broker.total_waiting) until the injected
// clock passes it, then planned and counted no more (with its plan still
// in flight: unacked, not waiting); one that ends
// while it waits (EvalsEnded, as the FSM reports a canceled one) is
// counted no more at once, its timer stopped and never planned.
func TestBrokerWaiting(t *testing.T) {
	job := testJob("web", jobTypeService, 1)
	later := evalOf("later", job)
	later.WaitUntil = testNow.Add(10 * time.Second).UnixNano()
	st := newHeldState(newMemSnapshot(testNodes(1), job), later)
	clock := actors.NewFakeClock(testNow)
	stats := &Stats{}
	sys := actors.NewSystem(slog.New(slog.DiscardHandler))
	t.Cleanup(sys.Shutdown)
	pid, err := sys.Root.SpawnNamed(sys.Props("scheduler", New(&Spec{State: func() StateView { return st },
		Proposer: st, Clock: clock, Logger: slog.New(slog.DiscardHandler), Seed: 1, Stats: stats})), "scheduler")
	require.NoError(t, err)
	st.pid = pid
	waitingIs := func(want int64, why string) {
		t.Helper()
		require.Eventually(t, func() bool { return stats.Load().Waiting == want }, 5*time.Second, time.Millisecond, why)
	}

	waitingIs(1, "the evaluation found pending at start waits for its WaitUntil")
	require.Equal(t, BrokerStats{Waiting: 1}, stats.Load(), "a waiting evaluation is neither ready nor unacked")
	clock.Advance(10 * time.Second)
	require.Equal(t, "later", st.next(t).EvalID, "planned once the clock passed its WaitUntil")
	waitingIs(0, "a wait whose timer fired is no longer counted, while its plan is on its way")
	require.Equal(t, int64(1), stats.Load().Unacked)
	st.release("later")

	gone := evalOf("gone", job)
	gone.WaitUntil = clock.Now().Add(time.Minute).UnixNano()
	st.add(sys, gone)
	waitingIs(1, "a new evaluation with a WaitUntil ahead waits")
	require.Eventually(t, func() bool { return clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	st.mu.Lock()
	canceled := cloneEval(gone)
	canceled.Status = messages.EvalStatusCanceled
	st.evals["gone"] = canceled
	st.mu.Unlock()
	sys.Root.Send(pid, &EvalsEnded{IDs: []string{"gone"}})
	waitingIs(0, "a canceled evaluation waits no more")
	require.Equal(t, 0, clock.Pending(), "its timer is stopped")
	clock.Advance(2 * time.Minute)
	select {
	case p := <-st.proposed:
		t.Fatalf("the canceled evaluation was planned: %s", p.EvalID)
	default:
	}
}
