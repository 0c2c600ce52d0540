package state

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/troupe-dev/troupe/messages"
)

// TestNestedIndexesOfBigPlans: plans of many placements (several batches
// for the nested-index worker, and a remainder) leave every index whole:
// by job, node and evaluation as by ID, after the commit and when read
// inside the transaction that wrote them, and with a replacement and a
// removal in the same transaction as fresh placements.
func TestNestedIndexesOfBigPlans(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newHarness(t)
	for i := range 3 {
		h.apply(registerNode(testNode(fmt.Sprintf("n%d", i), 1<<40, 1<<40)))
	}
	h.apply(registerJob(testJob("j", 10, 10), testEval("e1", "j", "complete")))
	p := &messages.ApplyPlan{EvalID: "e1"}
	for i := range 3*nestedBatch + 7 {
		p.Place = append(p.Place, testAlloc(fmt.Sprintf("a%04d", i), "j", fmt.Sprintf("n%d", i%3), "e1", 1, 1))
	}
	res := h.apply(plan(p)).(*messages.ApplyPlanResult)
	require.Len(t, res.Placed, len(p.Place))
	s := h.snap()
	require.Len(t, s.AllocsByJob("default", "j"), len(p.Place))
	require.Len(t, s.AllocsByEval("e1"), len(p.Place))
	total := 0
	for i := range 3 {
		on := s.AllocsByNode(fmt.Sprintf("n%d", i))
		for _, a := range on {
			require.Equal(t, fmt.Sprintf("n%d", i), a.NodeID)
		}
		total += len(on)
	}
	require.Equal(t, len(p.Place), total)

	// In one transaction: fresh placements, a read of what they made, a
	// move of one of them to another node, a removal.
	w := newWriteTxn(h.fsm.store, 100, 0, h.fsm.logger)
	for i := range 2*nestedBatch + 1 {
		w.putAlloc(nil, testAlloc(fmt.Sprintf("b%04d", i), "k", "n0", "e2", 1, 1))
	}
	require.Len(t, w.read().AllocsByEval("e2"), 2*nestedBatch+1, "the transaction reads its own placements")
	moved := testAlloc("b0000", "k", "n1", "e3", 1, 1)
	w.putAlloc(w.read().AllocByID("b0000"), moved)
	for i := range nestedBatch + 3 {
		w.putAlloc(nil, testAlloc(fmt.Sprintf("c%04d", i), "k", "n2", "e2", 1, 1))
	}
	w.allocTable(true).remove(w.read().AllocByID("b0001"))
	w.commit()
	s = h.snap()
	require.Len(t, s.AllocsByJob("default", "k"), 2*nestedBatch+1+nestedBatch+3-1)
	require.Len(t, s.AllocsByEval("e2"), 2*nestedBatch-1+nestedBatch+3)
	require.Equal(t, []string{"b0000"}, allocIDs(s.AllocsByEval("e3")))
	require.Contains(t, allocIDs(s.AllocsByNode("n1")), "b0000")
	require.NotContains(t, allocIDs(s.AllocsByNode("n0")), "b0000")
	require.NotContains(t, allocIDs(s.AllocsByNode("n0")), "b0001")

	// An aborted transaction ends its worker (goleak above) and changes
	// nothing.
	w = newWriteTxn(h.fsm.store, 101, 0, h.fsm.logger)
	for i := range 3 * nestedBatch {
		w.putAlloc(nil, testAlloc(fmt.Sprintf("d%04d", i), "m", "n0", "e4", 1, 1))
	}
	w.abort()
	require.Empty(t, h.snap().AllocsByJob("default", "m"))
}

// TestPublishedTableReadsWriteNothing: Snaps of one published table are
// read on many goroutines at once (the scheduler, the HTTP API, the node
// actors) while the FSM commits; their nested reads must not write to it
// (-race catches one that does).
func TestPublishedTableReadsWriteNothing(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n0", 1<<40, 1<<40)))
	h.apply(registerJob(testJob("j", 10, 10), testEval("e1", "j", "complete")))
	h.apply(plan(&messages.ApplyPlan{EvalID: "e1", Place: []*messages.Allocation{testAlloc("a1", "j", "n0", "e1", 1, 1)}}))
	s := h.snap()
	done := make(chan int)
	for range 4 {
		go func() {
			n := 0
			for range 100 {
				n += len(s.AllocsByJob("default", "j")) + len(s.AllocsByNode("n0")) + len(s.AllocsByEval("e1"))
			}
			done <- n
		}()
	}
	for i := range 20 {
		h.apply(plan(&messages.ApplyPlan{EvalID: "e1", Place: []*messages.Allocation{testAlloc(fmt.Sprintf("b%d", i), "j", "n0", "e1", 1, 1)}}))
	}
	for range 4 {
		require.Equal(t, 300, <-done, "the snapshot keeps what it saw")
	}
}
