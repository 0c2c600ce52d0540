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

// heldState is a StateView over a MemSnapshot whose proposer holds each
// plan until the test releases its evaluation, so that the test sees
// which plans the actor has on their way at once.
type heldState struct {
	*MemSnapshot
	evalStore
	gates    map[string]chan struct{}
	proposed chan *messages.ApplyPlan
	planning chan string // the job of each Process, while the test listens
	pid      *actor.PID
}

func newHeldState(snap *MemSnapshot, evals ...*messages.Evaluation) *heldState {
	s := &heldState{MemSnapshot: snap, evalStore: evalStore{evals: map[string]*messages.Evaluation{}}, gates: map[string]chan struct{}{},
		proposed: make(chan *messages.ApplyPlan, 16), planning: make(chan string, 16)}
	for _, e := range evals {
		s.evals[e.ID], s.order = e, append(s.order, e.ID)
		s.gates[e.ID] = make(chan struct{})
	}
	return s
}

// Apply holds a plan until its evaluation is released, then places all
// of it (without writing the allocations: the snapshot stays as it was).
func (s *heldState) Apply(_ context.Context, cmd *messages.Command) (any, uint64, error) {
	p := proposedPlan(cmd)
	if p == nil {
		return nil, 1, nil
	}
	s.proposed <- p
	s.mu.Lock()
	gate := s.gates[p.EvalID]
	s.mu.Unlock()
	<-gate
	s.mu.Lock()
	s.evals[p.EvalID] = p.GetEvalUpdate()
	s.mu.Unlock()
	res := &messages.ApplyPlanResult{Index: 1}
	for _, a := range p.GetPlace() {
		res.Placed = append(res.Placed, a.ID)
	}
	return res, 1, nil
}

func (s *heldState) release(evalID string) { close(s.gates[evalID]) }

// next returns the next plan proposed, failing after a deadline.
func (s *heldState) next(t *testing.T) *messages.ApplyPlan {
	t.Helper()
	select {
	case p := <-s.proposed:
		return p
	case <-time.After(5 * time.Second):
		t.Fatal("no plan proposed")
		return nil
	}
}

// JobByID tells the test which job is being planned.
func (s *heldState) JobByID(namespace, id string) *messages.Job {
	select {
	case s.planning <- id:
	default:
	}
	return s.MemSnapshot.JobByID(namespace, id)
}

// add stores a new pending evaluation and tells the actor, as the
// store's watch does.
func (s *heldState) add(sys *actors.System, e *messages.Evaluation) {
	s.mu.Lock()
	s.evals[e.ID], s.order = e, append(s.order, e.ID)
	s.gates[e.ID] = make(chan struct{})
	s.mu.Unlock()
	sys.Root.Send(s.pid, &messages.EvalReady{EvalID: e.ID})
}

func evalOf(id string, job *messages.Job) *messages.Evaluation {
	e := testEval(job)
	e.ID = id
	return e
}

func startHeld(t *testing.T, st *heldState) *actors.System {
	t.Helper()
	return startHeldDepth(t, st, 2) // the pipeline tests below count on two plans in flight at most
}

func startHeldDepth(t *testing.T, st *heldState, depth int) *actors.System {
	t.Helper()
	sys := actors.NewSystem(slog.New(slog.DiscardHandler))
	t.Cleanup(sys.Shutdown)
	pid, err := sys.Root.SpawnNamed(sys.Props("scheduler", New(&Spec{State: func() StateView { return st },
		Proposer: st, Clock: actors.NewFakeClock(testNow), Logger: slog.New(slog.DiscardHandler), Seed: 1,
		PipelineDepth: depth})), "scheduler")
	require.NoError(t, err)
	st.pid = pid
	return sys
}

// TestPipelinePlansAnotherJobWhileAPlanIsInFlight: with job a's plan on
// its way, the actor plans job b (not a's second evaluation), and b's
// placement avoids the node a's pending placement fills.
func TestPipelinePlansAnotherJobWhileAPlanIsInFlight(t *testing.T) {
	a, b := testJob("a", jobTypeService, 1), testJob("b", jobTypeService, 1)
	nodes := []*messages.Node{testNode("n1", 500, 256), testNode("n2", 500, 256)} // room for one alloc each
	st := newHeldState(newMemSnapshot(nodes, a, b), evalOf("a1", a), evalOf("a2", a), evalOf("b1", b))
	sys := startHeld(t, st)

	// Each plan goes to raft from its own goroutine: the two may come in
	// either order.
	got := map[string]*messages.ApplyPlan{}
	for range 2 {
		p := st.next(t)
		got[p.EvalID] = p
	}
	first, second := got["a1"], got["b1"]
	require.NotNil(t, first, "a's first evaluation is planned")
	require.NotNil(t, second, "b is planned while a's plan is in flight, a's second evaluation waits")
	require.Len(t, first.Place, 1)
	require.Len(t, second.Place, 1)
	require.NotEqual(t, first.Place[0].NodeID, second.Place[0].NodeID, "b's placement counts a's pending one as used")

	c := testJob("c", jobTypeService, 1)
	st.AddJob(c)
	st.release("b1")
	st.add(sys, evalOf("c1", c))
	require.Equal(t, "c1", st.next(t).EvalID, "with a's plan still in flight, the next plan is c's, not a's second")
	st.release("a1")
	require.Equal(t, "a2", st.next(t).EvalID, "a's second evaluation once a's first plan is committed")
	st.release("a2")
	st.release("c1")
}

// TestPipelineDefaultKeepsFourPlansInFlight: by default four plans, of
// four jobs, are on their way through raft at once; a fifth job's waits
// until one of them is committed.
func TestPipelineDefaultKeepsFourPlansInFlight(t *testing.T) {
	var jobs []*messages.Job
	var nodes []*messages.Node
	var evals []*messages.Evaluation
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		j := testJob(id, jobTypeService, 1)
		jobs = append(jobs, j)
		nodes = append(nodes, testNode("n-"+id, 500, 256))
		evals = append(evals, evalOf(id+"1", j))
	}
	st := newHeldState(newMemSnapshot(nodes, jobs...), evals...)
	startHeldDepth(t, st, 0)
	got := map[string]bool{}
	for range 4 {
		got[st.next(t).EvalID] = true
	}
	require.Equal(t, map[string]bool{"a1": true, "b1": true, "c1": true, "d1": true}, got, "four plans in flight, none committed")
	st.release("a1")
	require.Equal(t, "e1", st.next(t).EvalID, "the fifth once one is committed")
	for _, id := range []string{"b1", "c1", "d1", "e1"} {
		st.release(id)
	}
}

// TestPipelineReplansAloneWhatFailedOverPendingPlacements: b cannot be
// placed while a's pending placement fills the only node; its evaluation
// is not committed as failed but planned again once a's plan is done.
func TestPipelineReplansAloneWhatFailedOverPendingPlacements(t *testing.T) {
	a, b := testJob("a", jobTypeService, 1), testJob("b", jobTypeService, 1)
	st := newHeldState(newMemSnapshot([]*messages.Node{testNode("n1", 500, 256)}, a, b), evalOf("a1", a), evalOf("b1", b))
	startHeld(t, st)

	require.Equal(t, "a1", st.next(t).EvalID)
	for job := ""; job != "b"; job = <-st.planning { // b planned while a's plan is in flight
	}
	st.release("a1")
	p := st.next(t)
	require.Equal(t, "b1", p.EvalID)
	require.Len(t, p.Place, 1, "not proposed as failed over a's pending placement, but planned alone against the committed state (the fake commits nothing), b fits")
	require.Empty(t, p.GetEvalUpdate().GetFailedTGAllocs())
	st.release("b1")
}
