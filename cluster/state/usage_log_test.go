package state

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func changedSince(s *Snap, epoch any, gen uint64) ([]string, bool) {
	var ids []string
	ok := s.UsageChangedSince(epoch, gen, func(id string) { ids = append(ids, id) })
	slices.Sort(ids)
	return slices.Compact(ids), ok
}

// TestUsageLogNamesChangedNodes: a reader that kept a usage version learns
// exactly which nodes' usage changed since, until the log no longer
// reaches back or a restore starts another epoch.
func TestUsageLogNamesChangedNodes(t *testing.T) {
	h := newHarness(t)
	for i := range 4 {
		h.apply(registerNode(testNode(fmt.Sprintf("n%d", i), 4000, 4096)))
	}
	h.apply(registerJob(testJob("web", 10, 10), testEval("e-web", "web", "complete")))
	epoch0, gen0 := h.snap().UsageVersion()

	place := func(id, node string) {
		h.apply(plan(&messages.ApplyPlan{EvalID: "e-" + id, Place: []*messages.Allocation{testAlloc(id, "web", node, "e-"+id, 10, 10)}}))
	}
	place("a1", "n1")
	place("a2", "n3")
	epoch1, gen1 := h.snap().UsageVersion()
	require.Equal(t, epoch0, epoch1)
	require.Greater(t, gen1, gen0)

	ids, ok := changedSince(h.snap(), epoch0, gen0)
	require.True(t, ok)
	require.Equal(t, []string{"n1", "n3"}, ids)
	ids, ok = changedSince(h.snap(), epoch1, gen1)
	require.True(t, ok)
	require.Empty(t, ids, "nothing changed since the current version")

	// A client update that ends an allocation frees its node's usage.
	done := testAlloc("a1", "web", "n1", "e-a1", 10, 10)
	done.ClientStatus = "complete"
	h.apply(clientUpdate(done))
	ids, ok = changedSince(h.snap(), epoch1, gen1)
	require.True(t, ok)
	require.Equal(t, []string{"n1"}, ids)
	_, gen2 := h.snap().UsageVersion()

	// A write that changes no usage (an evaluation) moves no version.
	h.apply(&messages.Command{Cmd: &messages.Command_UpsertEvals{UpsertEvals: &messages.UpsertEvals{
		Evals: []*messages.Evaluation{testEval("e-other", "web", "pending")}}}})
	_, gen3 := h.snap().UsageVersion()
	require.Equal(t, gen2, gen3)

	old := h.snap()
	for i := range usageLogLen {
		place(fmt.Sprintf("x%d", i), "n2")
	}
	_, ok = changedSince(h.snap(), epoch1, gen2)
	require.False(t, ok, "the log no longer reaches back that far")
	ids, ok = changedSince(old, epoch1, gen2)
	require.True(t, ok, "an older snapshot keeps its own log")
	require.Empty(t, ids)

	restored := NewFSM(NewStore(), nil)
	require.NoError(t, restored.Restore(io.NopCloser(bytes.NewReader(persist(t, h.fsm).Bytes()))))
	ok = restored.Store().Snapshot().UsageChangedSince(epoch1, gen2, func(string) {})
	require.False(t, ok, "a restore is another epoch")
}
