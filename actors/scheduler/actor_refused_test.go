package scheduler

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// refusingState is a StateView over a MemSnapshot whose evaluations the
// refusing proposer writes; every plan it is given is refused whole.
type refusingState struct {
	*MemSnapshot
	evalStore
	sys   *actors.System
	pid   *actor.PID
	ready chan struct{} // closed once pid is set
}

// Apply refuses every placement and stores upserted evaluations, telling
// the scheduler about new pending ones as the store's watch does.
func (s *refusingState) Apply(_ context.Context, cmd *messages.Command) (any, uint64, error) {
	if p := proposedPlan(cmd); p != nil {
		res := &messages.ApplyPlanResult{}
		for _, a := range p.GetPlace() {
			res.Refused = append(res.Refused, a.GetID())
		}
		s.mu.Lock()
		s.evals[p.GetEvalUpdate().GetID()] = p.GetEvalUpdate() // as the FSM: the eval is done
		s.mu.Unlock()
		return res, 1, nil
	}
	for _, e := range cmd.GetUpsertEvals().GetEvals() {
		s.mu.Lock()
		if _, ok := s.evals[e.GetID()]; !ok {
			s.order = append(s.order, e.GetID())
		}
		s.evals[e.GetID()] = e
		s.mu.Unlock()
		if e.GetStatus() == "pending" {
			<-s.ready
			s.sys.Root.Send(s.pid, &messages.EvalReady{EvalID: e.GetID()})
		}
	}
	return nil, 1, nil
}

func (s *refusingState) retries() []*messages.Evaluation {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*messages.Evaluation
	for _, id := range s.order {
		if s.evals[id].GetTriggeredBy() == "plan-refused" {
			out = append(out, s.evals[id])
		}
	}
	return out
}

// TestRefusedPlansBackOff: a job whose plans the FSM keeps refusing is
// planned again at once, then after 1 s, 2 s, 4 s..., on the injected
// clock, never in a hot loop.
func TestRefusedPlansBackOff(t *testing.T) {
	job := testJob("web", jobTypeService, 1)
	clock := actors.NewFakeClock(testNow)
	sys := actors.NewSystem(slog.New(slog.DiscardHandler))
	defer sys.Shutdown()
	st := &refusingState{MemSnapshot: newMemSnapshot(testNodes(1), job), evalStore: evalStore{evals: map[string]*messages.Evaluation{}}, sys: sys,
		ready: make(chan struct{})}
	first := testEval(job)
	st.evals[first.ID], st.order = first, []string{first.ID}
	pid, err := sys.Root.SpawnNamed(sys.Props("scheduler", New(&Spec{State: func() StateView { return st },
		Proposer: st, Clock: clock, Logger: slog.New(slog.DiscardHandler), Seed: 1})), "scheduler")
	require.NoError(t, err)
	st.pid = pid // the actor found the first evaluation pending when it started
	close(st.ready)

	waits := []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second}
	for i, want := range waits {
		require.Eventually(t, func() bool { return len(st.retries()) > i }, 5*time.Second, time.Millisecond)
		ev := st.retries()[i]
		got := time.Duration(0)
		if ev.GetWaitUntil() > 0 {
			got = time.Unix(0, ev.GetWaitUntil()).Sub(clock.Now())
		}
		require.Equal(t, want, got, "retry %d", i+1)
		if want > 0 {
			require.Eventually(t, func() bool { return clock.Pending() > 0 }, 5*time.Second, time.Millisecond)
			require.Len(t, st.retries(), i+1, "nothing planned before the wait")
			clock.Advance(want)
		}
	}
}

// The scheduler's retry numbers, as they were before actors.Retry.
func TestSchedulerRetryNumbers(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 0, 2: time.Second, 3: 2 * time.Second, 6: 16 * time.Second, 7: 30 * time.Second, 100: 30 * time.Second} {
		require.Equal(t, want, refusedBackoff(n), "refused %d", n)
	}
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 29: 29 * time.Second, 30: 30 * time.Second, 1000: 30 * time.Second} {
		got, ok := commitRetry.Delay(n, 0)
		require.True(t, ok, "a failed commit is retried for ever")
		require.Equal(t, want, got, "commit failure %d", n)
	}
}

// proposedPlan is the plan a command proposes, expanded as the FSM
// expands it (the scheduler proposes the compact form).
func proposedPlan(cmd *messages.Command) *messages.ApplyPlan {
	p := cmd.GetApplyPlan()
	if err := p.ExpandPlaced(); err != nil {
		panic(err)
	}
	return p
}
