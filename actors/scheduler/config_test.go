package scheduler

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// TestConfigPerEvaluation: what each evaluation reads of the scheduler
// configuration: the algorithm (Options.SchedulerAlgorithm unless the
// caller set it) and whether memory_max reaches the allocation.
func TestConfigPerEvaluation(t *testing.T) {
	tests := []struct {
		name     string
		cfg      *messages.SchedulerConfiguration // nil: none in the snapshot
		optAlgo  string
		wantAlgo string
		wantMax  int64
	}{
		{name: "defaults", wantAlgo: algorithmBinPack},
		{name: "spread from the configuration", cfg: &messages.SchedulerConfiguration{SchedulerAlgorithm: algorithmSpread}, wantAlgo: algorithmSpread},
		{name: "the caller's algorithm wins", cfg: &messages.SchedulerConfiguration{SchedulerAlgorithm: algorithmSpread},
			optAlgo: algorithmBinPack, wantAlgo: algorithmBinPack},
		{name: "an empty algorithm is binpack", cfg: &messages.SchedulerConfiguration{}, wantAlgo: algorithmBinPack},
		{name: "memory_max with oversubscription", cfg: &messages.SchedulerConfiguration{MemoryOversubscriptionEnabled: true},
			wantAlgo: algorithmBinPack, wantMax: 1024},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := testJob("web", jobTypeService, 1)
			job.TaskGroups[0].Tasks[0].Resources.MemoryMaxMB = 1024
			var snap Snapshot = newMemSnapshot(testNodes(1), job)
			if tt.cfg != nil {
				snap = configSnap{snap.(*MemSnapshot), tt.cfg}
			}
			opts := testOpts(1)
			opts.SchedulerAlgorithm = tt.optAlgo
			p := newPlanner(snap, testEval(job), opts)
			require.NoError(t, p.run())
			require.Equal(t, tt.wantAlgo, p.opts.SchedulerAlgorithm)
			require.Len(t, p.plan.Place, 1)
			mem := p.plan.Place[0].AllocatedResources.Tasks["server"].Memory
			require.EqualValues(t, 256, mem.MemoryMB)
			require.Equal(t, tt.wantMax, mem.MemoryMaxMB)
		})
	}
}

// pauseState is a StateView over a MemSnapshot with one pending
// evaluation and a configuration the test changes; it counts the plans
// proposed.
type pauseState struct {
	*MemSnapshot
	mu     sync.Mutex
	eval   *messages.Evaluation
	paused bool
	plans  atomic.Int32
}

func (s *pauseState) SchedulerConfig() *messages.SchedulerConfiguration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &messages.SchedulerConfiguration{PauseEvalBroker: s.paused}
}

func (s *pauseState) EvalByID(id string) *messages.Evaluation {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.eval.GetID() == id {
		return s.eval
	}
	return nil
}

func (s *pauseState) EvalsByStatus(status string) []*messages.Evaluation {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.eval.GetStatus() == status {
		return []*messages.Evaluation{s.eval}
	}
	return nil
}

func (s *pauseState) Apply(_ context.Context, cmd *messages.Command) (any, uint64, error) {
	if p := proposedPlan(cmd); p != nil {
		s.plans.Add(1)
		s.mu.Lock()
		s.eval = p.GetEvalUpdate()
		s.mu.Unlock()
		return &messages.ApplyPlanResult{}, 1, nil
	}
	return nil, 1, nil
}

// TestActorHoldsEvaluationsWhilePaused: with PauseEvalBroker set the
// scheduler keeps its evaluations queued and plans none; once the
// configuration lifts the pause (ConfigChanged) it plans them.
func TestActorHoldsEvaluationsWhilePaused(t *testing.T) {
	job := testJob("web", jobTypeService, 1)
	st := &pauseState{MemSnapshot: newMemSnapshot(testNodes(1), job), eval: testEval(job), paused: true}
	sys := actors.NewSystem(slog.New(slog.DiscardHandler))
	defer sys.Shutdown()
	pid, err := sys.Root.SpawnNamed(sys.Props("scheduler", New(&Spec{State: func() StateView { return st },
		Proposer: st, Clock: actors.NewFakeClock(testNow), Logger: slog.New(slog.DiscardHandler), Seed: 1})), "scheduler")
	require.NoError(t, err)
	phase := func() string {
		for _, in := range sys.Tree() {
			if in.Kind == "scheduler" {
				return in.Phase
			}
		}
		return ""
	}
	sys.Root.Send(pid, &messages.EvalReady{EvalID: st.eval.ID}) // queued once, still held
	require.Eventually(t, func() bool { return strings.HasPrefix(phase(), "paused") && strings.Contains(phase(), "(1 queued)") },
		5*time.Second, time.Millisecond, "phase %q", phase())
	require.Zero(t, st.plans.Load())

	st.mu.Lock()
	st.paused = false
	st.mu.Unlock()
	sys.Root.Send(pid, &ConfigChanged{})
	require.Eventually(t, func() bool { return st.plans.Load() == 1 }, 5*time.Second, time.Millisecond)
}
