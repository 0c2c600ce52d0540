package state

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

const hour = int64(time.Hour)

func gcCmd(at int64, c *messages.GarbageCollect) *messages.Command {
	return &messages.Command{Time: at, Cmd: &messages.Command_GarbageCollect{GarbageCollect: c}}
}

// runBatchJob registers batch job id at time at, places one allocation
// on n1 and completes it.
func runBatchJob(h *harness, id string, at int64) {
	job := testJob(id, 10, 10)
	job.Type = "batch"
	e := testEval("e-"+id, id, messages.EvalStatusPending)
	e.Type = "batch"
	done := testEval("e-"+id, id, messages.EvalStatusComplete)
	done.Type = "batch"
	reg := registerJob(job, e)
	reg.GetRegisterJob().Submission = &messages.JobSubmission{Source: "job \"" + id + "\" {}", Format: "hcl2"}
	h.apply(&messages.Command{Time: at, Cmd: reg.Cmd})
	h.apply(&messages.Command{Time: at, Cmd: plan(&messages.ApplyPlan{
		EvalID: e.ID, Place: []*messages.Allocation{testAlloc("a-"+id, id, "n1", e.ID, 10, 10)}, EvalUpdate: done,
	}).Cmd})
	h.apply(&messages.Command{Time: at, Cmd: clientUpdate(&messages.Allocation{ID: "a-" + id, ClientStatus: "complete", ModifyTime: at}).Cmd})
}

// sizes are the counts of every table and index GC must clean.
type sizes struct {
	Jobs, Versions, Submissions, Evals, Summaries, Allocs, ByJob, ByNode, ByEval, Windows int
}

func sizesOf(t *testing.T, s *Snap) sizes {
	count := func(table string) int {
		it, err := s.txn.Get(table, idxID)
		require.NoError(t, err)
		n := 0
		for o := it.Next(); o != nil; o = it.Next() {
			n++
		}
		return n
	}
	return sizes{
		Jobs: count(TableJobs), Versions: count(tableJobVersions), Submissions: count(tableJobSubmissions), Evals: count(TableEvals),
		Summaries: count(tableJobSummary), Allocs: s.allocs.byID.Len(), ByJob: s.allocs.byJob.Len(),
		ByNode: s.allocs.byNode.Len(), ByEval: s.allocs.byEval.Len(), Windows: s.allocs.windows.Len(),
	}
}

func TestGCBatchJobRules(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1<<20, 1<<20)))
	runBatchJob(h, "old", testNow)
	runBatchJob(h, "young", testNow+3*hour)
	now := testNow + 4*hour + 1
	cut := GCCutoffs{Eval: now - hour, Job: now - 4*hour, Node: now - 24*hour}
	s := h.snap()
	require.True(t, s.JobCollectable(s.JobByID("default", "old"), cut))
	require.False(t, s.JobCollectable(s.JobByID("default", "young"), cut), "younger than the job threshold")
	require.False(t, s.EvalCollectable(s.EvalByID("e-old"), cut), "a live batch job keeps its evals")

	res := h.apply(gcCmd(now, &messages.GarbageCollect{
		Jobs:       []*messages.GCJob{{Namespace: "default", ID: "old"}, {Namespace: "default", ID: "young"}},
		EvalIDs:    []string{"e-young"},
		EvalCutoff: cut.Eval, JobCutoff: cut.Job, NodeCutoff: cut.Node,
	}))
	r := res.(*GCResult)
	require.Equal(t, []int{1, 1, 0}, []int{r.Jobs, r.Allocs, r.Evals})
	s = h.snap()
	require.Nil(t, s.JobByID("default", "old"))
	require.Nil(t, s.AllocByID("a-old"))
	require.Nil(t, s.EvalByID("e-old"))
	require.Empty(t, s.JobVersions("default", "old"))
	require.Nil(t, s.JobSubmission("default", "old", 0), "a collected job's submission goes with it")
	require.NotNil(t, s.JobSubmission("default", "young", 0))
	require.NotNil(t, s.JobByID("default", "young"))
	require.NotNil(t, s.EvalByID("e-young"))
}

func TestGCRechecksAtApply(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1<<20, 1<<20)))
	runBatchJob(h, "b", testNow)
	now := testNow + 5*hour
	// The job runs again after the collector decided: a new allocation.
	h.apply(&messages.Command{Time: now, Cmd: plan(&messages.ApplyPlan{
		Place: []*messages.Allocation{testAlloc("a-new", "b", "n1", "e-new", 10, 10)},
	}).Cmd})
	res := h.apply(gcCmd(now, &messages.GarbageCollect{
		Jobs: []*messages.GCJob{{Namespace: "default", ID: "b"}}, EvalIDs: []string{"e-b"},
		NodeIDs: []string{"n1"}, EvalCutoff: now, JobCutoff: now, NodeCutoff: now,
	}))
	require.Equal(t, &GCResult{Index: h.index}, res)
	s := h.snap()
	require.NotNil(t, s.JobByID("default", "b"))
	require.NotNil(t, s.AllocByID("a-b"))
	require.NotNil(t, s.NodeByID("n1"), "a ready node stays")
}

func TestGCNodesAndPlugins(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("down", 1000, 1000)))
	h.apply(registerNode(testNode("busy", 1000, 1000)))
	h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{testAlloc("live", "web", "busy", "e1", 1, 1)}}))
	for _, id := range []string{"down", "busy"} {
		h.apply(&messages.Command{Time: testNow, Cmd: &messages.Command_UpdateNodeStatus{
			UpdateNodeStatus: &messages.UpdateNodeStatus{NodeID: id, Status: messages.NodeStatusDown}}})
	}
	now := testNow + 25*hour
	res := h.apply(gcCmd(now, &messages.GarbageCollect{NodeIDs: []string{"down", "busy"}, PluginIDs: []string{"none"},
		EvalCutoff: now, JobCutoff: now, NodeCutoff: now - 24*hour}))
	require.Equal(t, 1, res.(*GCResult).Nodes)
	ev := h.lastEvent()
	require.Equal(t, []string{"down"}, ev.NodesDeleted, "the leader learns which node actors to stop")
	require.NotContains(t, ev.NodeUpdated, "down")
	s := h.snap()
	require.Nil(t, s.NodeByID("down"))
	require.NotNil(t, s.NodeByID("busy"), "a node with a live allocation stays")
	_, ok := s.allocs.usage.Get("down")
	require.False(t, ok)
}

func TestGCRefusesOversizedBatch(t *testing.T) {
	h := newHarness(t)
	ids := make([]string, MaxGCItems+1)
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	require.ErrorIs(t, h.apply(gcCmd(testNow, &messages.GarbageCollect{EvalIDs: ids})).(error), ErrGCTooLarge)
}

// TestGCSoak runs thousands of short batch jobs, then collects them on a
// later clock: every table and index returns to its baseline, and a
// snapshot of the collected state restores to the same state.
func TestGCSoak(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1<<30, 1<<30)))
	runBatchJob(h, "keep", testNow) // a job that stays: its node's index entry too
	h.apply(&messages.Command{Time: testNow, Cmd: plan(&messages.ApplyPlan{
		Place: []*messages.Allocation{testAlloc("a-svc", "svc", "n1", "e-svc", 1, 1)}}).Cmd})
	base := sizesOf(t, h.snap())
	cpu0, mem0, _ := h.snap().NodeUsage("n1")

	start := testNow + 10*hour
	for i := range n {
		runBatchJob(h, fmt.Sprintf("job-%05d", i), start+int64(i)*int64(time.Second))
	}
	require.Equal(t, base.Allocs+n, sizesOf(t, h.snap()).Allocs)

	now := start + int64(n)*int64(time.Second) + 4*hour
	cut := GCCutoffs{Eval: now - hour, Job: now - 4*hour, Node: now - 24*hour}
	var jobs []*messages.GCJob
	for _, j := range h.snap().Jobs() {
		if j.ID != "keep" && h.snap().JobCollectable(j, cut) {
			jobs = append(jobs, &messages.GCJob{Namespace: j.Namespace, ID: j.ID})
		}
	}
	require.Len(t, jobs, n)
	for len(jobs) > 0 {
		k := min(len(jobs), MaxGCItems)
		h.apply(gcCmd(now, &messages.GarbageCollect{Jobs: jobs[:k], EvalCutoff: cut.Eval, JobCutoff: cut.Job, NodeCutoff: cut.Node}))
		jobs = jobs[k:]
	}
	require.Equal(t, base, sizesOf(t, h.snap()))
	cpu, mem, _ := h.snap().NodeUsage("n1")
	require.Equal(t, []int64{cpu0, mem0}, []int64{cpu, mem})

	sink := persist(t, h.fsm)
	restored := NewFSM(NewStore(), nil)
	require.NoError(t, restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
	requireSameState(t, h.snap(), restored.Store().Snapshot())
	require.Equal(t, base, sizesOf(t, restored.Store().Snapshot()))
}
