package scheduler

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// gatedState is an unblockState whose plan commits wait for the test:
// planning is told when a plan reaches Apply, which then waits on gate
// and stores the plan's evaluations as the FSM does.
type gatedState struct {
	*unblockState
	planning chan struct{}
	gate     chan struct{}
}

func (s *gatedState) Apply(ctx context.Context, cmd *messages.Command) (any, uint64, error) {
	p := proposedPlan(cmd)
	if p == nil {
		return s.unblockState.Apply(ctx, cmd)
	}
	s.planning <- struct{}{}
	<-s.gate
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evals[p.GetEvalUpdate().GetID()] = p.GetEvalUpdate()
	for _, e := range p.GetNewEvals() {
		s.evals[e.GetID()] = e
	}
	return &messages.ApplyPlanResult{}, 1, nil
}

// TestActorCSIChangedWhilePlanning: the claim that made a placement fail
// is freed while that plan is being committed. The scheduler handled the
// change before the plan's blocked evaluation was stored, so it is handled
// again once the plan landed: the evaluation is unblocked, not left
// blocked with nothing running (a failed allocation whose volume claim
// is released just after its reschedule was planned).
func TestActorCSIChangedWhilePlanning(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change any
		why    string
	}{
		{"csi", &CSIChanged{Volumes: []string{"vol1"}}, descUnblockedCSI},
		{"capacity", &CapacityChanged{}, descUnblockedCapacity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newCSIWorld(false, 1)
			w.snap.plugins["hostpath"] = csiPlugin("hostpath", true)
			w.snap.vols["vol1"] = csiVol("vol1", "hostpath", writer("old", "taken"))
			ev := testEval(w.job)
			st := &gatedState{unblockState: &unblockState{csiSnap: w.snap, evals: map[string]*messages.Evaluation{ev.GetID(): ev}},
				planning: make(chan struct{}, 1), gate: make(chan struct{})}
			sys := actors.NewSystem(slog.New(slog.DiscardHandler))
			defer sys.Shutdown()
			pid, err := sys.Root.SpawnNamed(sys.Props("scheduler", New(&Spec{State: func() StateView { return st },
				Proposer: st, Clock: actors.NewFakeClock(testNow), Logger: slog.New(slog.DiscardHandler), Seed: 1})), "scheduler")
			require.NoError(t, err)

			sys.Root.Send(pid, &messages.EvalReady{EvalID: ev.GetID()})
			select {
			case <-st.planning:
			case <-time.After(5 * time.Second):
				t.Fatal("the evaluation was never planned")
			}
			st.mu.Lock()
			w.snap.vols["vol1"] = csiVol("vol1", "hostpath") // the old claim is freed
			st.mu.Unlock()
			sys.Root.Send(pid, tc.change) // handled while the plan is in flight
			close(st.gate)

			var blocked *messages.Evaluation
			require.Eventually(t, func() bool {
				st.mu.Lock()
				defer st.mu.Unlock()
				for _, e := range st.evals {
					if e.GetTriggeredBy() == triggerQueued {
						blocked = e
					}
				}
				return blocked != nil && blocked.GetStatus() == messages.EvalStatusPending
			}, 5*time.Second, time.Millisecond, "the blocked evaluation stayed blocked")
			require.Equal(t, tc.why, blocked.GetStatusDescription())
		})
	}
}
