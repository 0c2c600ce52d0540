package state

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// seedStore registers two nodes, namespace "prod", two jobs (one in
// prod), and places three allocations through the FSM.
func seedStore(t *testing.T) *harness {
	h := newHarness(t)
	require.Nil(t, h.apply(upsertNamespaces(&messages.Namespace{Name: "prod"})))
	h.apply(registerNode(testNode("n2", 4000, 4096)))
	h.apply(registerNode(testNode("n1", 4000, 4096)))
	h.apply(registerJob(testJob("web", 100, 100), testEval("e-web", "web", messages.EvalStatusPending)))
	other := testJob("web", 100, 100)
	other.Namespace = "prod"
	otherEval := testEval("e-prod", "web", "blocked")
	otherEval.Namespace = "prod"
	h.apply(registerJob(other, otherEval))
	h.apply(plan(&messages.ApplyPlan{EvalID: "e-web", Place: []*messages.Allocation{
		testAlloc("a3", "web", "n1", "e-web", 100, 100),
		testAlloc("a1", "web", "n2", "e-web", 100, 100),
		testAlloc("a2", "web", "n1", "e-web", 100, 100),
	}}))
	return h
}

func allocIDs(allocs []*messages.Allocation) []string {
	var ids []string
	for _, a := range allocs {
		ids = append(ids, a.ID)
	}
	return ids
}

func TestSnapReads(t *testing.T) {
	h := seedStore(t)
	s := h.snap()

	require.Equal(t, "default", s.JobByID("default", "web").Namespace)
	require.Equal(t, "prod", s.JobByID("prod", "web").Namespace)
	require.Nil(t, s.JobByID("default", "we"), "no prefix match")
	require.Nil(t, s.JobByID("other", "web"))
	jobs := s.Jobs()
	require.Len(t, jobs, 2)
	require.Equal(t, []string{"default", "prod"}, []string{jobs[0].Namespace, jobs[1].Namespace})
	require.Len(t, s.JobVersions("default", "web"), 1)
	require.NotNil(t, s.JobVersion("default", "web", 0))
	require.Nil(t, s.JobVersion("default", "web", 1))

	require.Equal(t, "e-web", s.EvalByID("e-web").ID)
	require.Nil(t, s.EvalByID("e-"))
	require.Len(t, s.Evals(), 2)
	require.Equal(t, "e-web", s.EvalsByJob("default", "web")[0].ID)
	require.Len(t, s.EvalsByJob("default", "web"), 1)
	require.Equal(t, "e-prod", s.EvalsByStatus("blocked")[0].ID)
	require.Len(t, s.EvalsByStatus(messages.EvalStatusPending), 1)
	require.Empty(t, s.EvalsByStatus("pend"))

	require.Equal(t, "n1", s.AllocByID("a2").NodeID)
	require.Nil(t, s.AllocByID("a"))
	require.Equal(t, []string{"a1", "a2", "a3"}, allocIDs(s.Allocs()))
	require.Equal(t, []string{"a1", "a2", "a3"}, allocIDs(s.AllocsByJob("default", "web")))
	require.Empty(t, s.AllocsByJob("prod", "web"))
	require.Equal(t, []string{"a2", "a3"}, allocIDs(s.AllocsByNode("n1")))
	require.Equal(t, []string{"a1"}, allocIDs(s.AllocsByNode("n2")))
	require.Equal(t, []string{"a1", "a2", "a3"}, allocIDs(s.AllocsByEval("e-web")))
	require.Empty(t, s.AllocsByEval("e-prod"))

	require.Equal(t, "n1", s.NodeByID("n1").ID)
	require.Equal(t, "n2", s.NodeByName("name-n2").ID)
	require.Nil(t, s.NodeByName("name-n"))
	require.Equal(t, []string{"n1", "n2"}, []string{s.Nodes()[0].ID, s.Nodes()[1].ID})
	cpu, mem, disk := s.NodeUsage("n1")
	require.Equal(t, []int64{200, 200, 0, 2}, []int64{cpu, mem, disk, s.liveAllocs("n1")})
}

func TestSnapIsIsolatedFromLaterWrites(t *testing.T) {
	h := seedStore(t)
	before := h.snap()
	h.apply(clientUpdate(&messages.Allocation{ID: "a1", ClientStatus: "running"}))
	h.apply(registerNode(testNode("n3", 1, 1)))
	require.Equal(t, messages.AllocClientStatusPending, before.AllocByID("a1").ClientStatus)
	require.Nil(t, before.NodeByID("n3"))
	require.Equal(t, "running", h.snap().AllocByID("a1").ClientStatus)
}

func TestIndexRecordsLastChangePerTable(t *testing.T) {
	h := newHarness(t)
	require.Zero(t, h.snap().Index())
	h.apply(registerNode(testNode("n1", 1000, 1000)))                                               // 1
	h.apply(registerJob(testJob("web", 10, 10), testEval("e1", "web", messages.EvalStatusPending))) // 2
	s := h.snap()
	require.Equal(t, uint64(1), s.Index(TableNodes))
	require.Equal(t, uint64(2), s.Index(TableJobs))
	require.Equal(t, uint64(2), s.Index(TableEvals))
	require.Zero(t, s.Index(TableAllocs))
	require.Equal(t, uint64(2), s.Index(TableNodes, TableJobs))
	require.Equal(t, uint64(2), s.Index())
	h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{testAlloc("a1", "web", "n1", "e1", 10, 10)}})) // 3
	require.Equal(t, uint64(3), h.snap().Index(TableAllocs))
	require.Equal(t, uint64(1), h.snap().Index(TableNodes))
}

func TestWait(t *testing.T) {
	tests := []struct {
		name   string
		tables []string
		cmd    *messages.Command
		wakes  bool
	}{
		{"write to watched table wakes", []string{TableNodes}, registerNode(testNode("n2", 1, 1)), true},
		{"write to another table does not", []string{TableAllocs}, registerNode(testNode("n2", 1, 1)), false},
		{"any of several tables wakes", []string{TableAllocs, TableNodes}, registerNode(testNode("n2", 1, 1)), true},
		{"no tables watches all", nil, registerJob(testJob("j", 1, 1), nil), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.apply(registerNode(testNode("n1", 1, 1)))
			min := h.snap().Index()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			done := make(chan uint64, 1)
			go func() { done <- h.fsm.store.Wait(ctx, min, tt.tables...) }()
			h.apply(tt.cmd)
			got := <-done
			if tt.wakes {
				require.NoError(t, ctx.Err(), "woke before the deadline")
				require.Equal(t, min+1, got)
				return
			}
			require.Error(t, ctx.Err(), "returned only when ctx ended")
			require.Equal(t, h.snap().Index(tt.tables...), got)
		})
	}
}

func TestWaitReturnsAtOnceWhenAlreadyPast(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1, 1)))
	require.Equal(t, uint64(1), h.fsm.store.Wait(context.Background(), 0, TableNodes))
}

func TestWaitReturnsOnCancel(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan uint64, 1)
	go func() { done <- h.fsm.store.Wait(ctx, 5) }()
	cancel()
	select {
	case got := <-done:
		require.Zero(t, got)
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return on cancel")
	}
}

func TestConcurrentReadersSeeConsistentSnapshots(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1<<40, 1<<40)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		var seen uint64
		for ctx.Err() == nil {
			seen = h.fsm.store.Wait(ctx, seen, TableAllocs)
			s := h.fsm.store.Snapshot()
			// Every plan places 10 allocs on n1: the index and the
			// alloc table must agree.
			byNode, all := len(s.AllocsByNode("n1")), len(s.Allocs())
			used := s.liveAllocs("n1")
			if byNode != all || int64(all) != used || all%10 != 0 {
				errs <- fmt.Errorf("inconsistent snapshot: node %d, all %d, usage %d", byNode, all, used)
				return
			}
		}
	}()
	for p := range 50 {
		pl := &messages.ApplyPlan{}
		for i := range 10 {
			pl.Place = append(pl.Place, testAlloc(fmt.Sprintf("a%03d-%d", p, i), "web", "n1", "e", 1, 1))
		}
		h.apply(plan(pl))
	}
	cancel()
	require.NoError(t, <-errs)
	require.Len(t, h.snap().Allocs(), 500)
}

// schedulerSnapshot mirrors actors/scheduler's Snapshot and
// NodeUsageSource (cluster may not import actors).
type schedulerSnapshot interface {
	JobByID(namespace, id string) *messages.Job
	Nodes() []*messages.Node
	NodeByID(id string) *messages.Node
	AllocsByJob(namespace, jobID string) []*messages.Allocation
	AllocsByNode(nodeID string) []*messages.Allocation
	NodeUsage(nodeID string) (cpuShares, memoryMB, diskMB int64)
}

var _ schedulerSnapshot = (*Snap)(nil)
