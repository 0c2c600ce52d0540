package state

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// windowJob is testJob whose group "web" keeps its allocations for lost
// (disconnect lost_after) and stop (stop_after_client_disconnect).
func windowJob(id string, lost, stop time.Duration) *messages.Job {
	j := testJob(id, 1, 1)
	j.TaskGroups[0].Disconnect = &messages.DisconnectStrategy{LostAfter: int64(lost)}
	j.TaskGroups[0].StopAfterClientDisconnect = int64(stop)
	return j
}

// walkedWindow is the disconnect window the way the node actor used to
// compute it: a walk of the node's allocations and their job versions.
func walkedWindow(s *Snap, nodeID string) time.Duration {
	var w time.Duration
	for _, a := range s.AllocsByNode(nodeID) {
		if a.ClientTerminalStatus() || a.GetDesiredStatus() != messages.AllocDesiredStatusRun {
			continue
		}
		w = max(w, DisconnectWindow(s.JobVersion(a.Namespace, a.JobID, a.JobVersion), a.TaskGroup))
	}
	return w
}

// requireWindow checks the derived window of n1 against want and the walk.
func requireWindow(t *testing.T, h *harness, want time.Duration, msg string) {
	t.Helper()
	require.Equal(t, want, h.snap().DisconnectWindow("n1"), msg)
	require.Equal(t, walkedWindow(h.snap(), "n1"), h.snap().DisconnectWindow("n1"), "derived = walked: %s", msg)
}

func stopAllocCmd(id string) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_StopAlloc{StopAlloc: &messages.StopAlloc{AllocID: id}}}
}

func TestDisconnectWindowFollowsAllocChanges(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1000, 1000)))
	h.apply(registerNode(testNode("n2", 1000, 1000)))
	h.apply(registerJob(windowJob("short", 30*time.Second, 0), nil))
	h.apply(registerJob(windowJob("long", 0, time.Minute), nil))
	h.apply(registerJob(testJob("none", 1, 1), nil))
	requireWindow(t, h, 0, "no allocations")

	h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{
		testAlloc("s1", "short", "n1", "e1", 1, 1), testAlloc("s2", "short", "n1", "e1", 1, 1),
		testAlloc("l1", "long", "n1", "e1", 1, 1), testAlloc("l2", "long", "n1", "e1", 1, 1),
		testAlloc("x1", "none", "n1", "e1", 1, 1), testAlloc("o1", "long", "n2", "e1", 1, 1),
	}}))
	requireWindow(t, h, time.Minute, "longest of the placed")
	require.Equal(t, time.Minute, h.snap().DisconnectWindow("n2"))

	h.apply(clientUpdate(&messages.Allocation{ID: "l1", ClientStatus: "running"}, &messages.Allocation{ID: "s1", ClientStatus: "running"}))
	requireWindow(t, h, time.Minute, "a running update changes nothing")

	h.apply(clientUpdate(&messages.Allocation{ID: "l1", ClientStatus: "complete"}))
	requireWindow(t, h, time.Minute, "one of two longest ended: the other still holds it")

	h.apply(stopAllocCmd("l2"))
	requireWindow(t, h, 30*time.Second, "the last longest stopped: the next one")

	h.apply(plan(&messages.ApplyPlan{Stop: []*messages.AllocStopUpdate{{AllocID: "s1"}}}))
	requireWindow(t, h, 30*time.Second, "a plan stop of one of two")

	h.apply(clientUpdate(&messages.Allocation{ID: "s2", ClientStatus: "lost"}))
	requireWindow(t, h, 0, "only allocations without a window are left")
	require.Equal(t, time.Minute, h.snap().DisconnectWindow("n2"), "other nodes untouched")

	h.apply(clientUpdate(&messages.Allocation{ID: "s2", ClientStatus: "running"}))
	requireWindow(t, h, 0, "a lost allocation is not revived")
}

func TestDisconnectWindowInPlaceUpdateToNewVersion(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1000, 1000)))
	h.apply(registerJob(windowJob("web", 0, time.Minute), nil))
	h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{testAlloc("a1", "web", "n1", "e1", 1, 1)}}))
	requireWindow(t, h, time.Minute, "version 0")

	h.apply(registerJob(windowJob("web", 10*time.Second, 0), nil))
	v1 := h.snap().JobByID("default", "web")
	require.Equal(t, uint64(1), v1.Version)
	requireWindow(t, h, time.Minute, "the allocation still runs version 0")

	upd := testAlloc("a1", "web", "n1", "e2", 1, 1)
	upd.Job = v1
	res := h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{upd}}))
	require.Equal(t, []string{"a1"}, res.(*messages.ApplyPlanResult).Placed)
	requireWindow(t, h, 10*time.Second, "updated in place to version 1")
}

func TestDisconnectWindowDroppedWithItsVersion(t *testing.T) {
	t.Run("pruned", func(t *testing.T) {
		h := newHarness(t)
		h.fsm.store.SetJobVersions(1)
		h.apply(registerNode(testNode("n1", 1000, 1000)))
		h.apply(registerJob(windowJob("web", 0, time.Minute), nil))
		h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{testAlloc("a1", "web", "n1", "e1", 1, 1)}}))
		requireWindow(t, h, time.Minute, "before the prune")
		h.apply(registerJob(testJob("web", 1, 1), nil)) // version 1 prunes version 0
		require.Nil(t, h.snap().JobVersion("default", "web", 0))
		requireWindow(t, h, 0, "the version the allocation runs is gone")
		h.apply(clientUpdate(&messages.Allocation{ID: "a1", ClientStatus: "complete"}))
		requireWindow(t, h, 0, "ending it later removes nothing twice")
	})
	t.Run("purged", func(t *testing.T) {
		h := newHarness(t)
		h.apply(registerNode(testNode("n1", 1000, 1000)))
		h.apply(registerJob(windowJob("web", 0, time.Minute), nil))
		h.apply(registerJob(windowJob("other", 0, 20*time.Second), nil))
		h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{
			testAlloc("a1", "web", "n1", "e1", 1, 1), testAlloc("b1", "other", "n1", "e1", 1, 1)}}))
		h.apply(deregister("web", true, nil))
		requireWindow(t, h, 20*time.Second, "the purged job's allocations count no window")
	})
}

// TestDisconnectWindowRestoredFromSnapshot: a restored store (a new
// leader, a restarted server) derives the same windows.
func TestDisconnectWindowRestoredFromSnapshot(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1000, 1000)))
	h.apply(registerNode(testNode("n2", 1000, 1000)))
	h.apply(registerJob(windowJob("web", 0, time.Minute), nil))
	h.apply(registerJob(windowJob("db", 45*time.Second, 0), nil))
	h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{
		testAlloc("a1", "web", "n1", "e1", 1, 1), testAlloc("a2", "web", "n1", "e1", 1, 1),
		testAlloc("d1", "db", "n1", "e1", 1, 1), testAlloc("d2", "db", "n2", "e1", 1, 1),
	}}))
	h.apply(clientUpdate(&messages.Allocation{ID: "a1", ClientStatus: "failed"}))

	sink := persist(t, h.fsm)
	restored := NewFSM(NewStore(), nil)
	require.NoError(t, restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
	got := restored.Store().Snapshot()
	require.Equal(t, time.Minute, got.DisconnectWindow("n1"))
	require.Equal(t, 45*time.Second, got.DisconnectWindow("n2"))
	requireSameState(t, h.snap(), got)

	// The restored store keeps counting: the last longest one ends.
	res := restored.Apply(rawLog(h.index+1, mustMarshal(t, clientUpdate(&messages.Allocation{ID: "a2", ClientStatus: "complete"}))))
	require.Nil(t, res)
	require.Equal(t, 45*time.Second, restored.Store().Snapshot().DisconnectWindow("n1"))
}

func TestWindowCounts(t *testing.T) {
	c := &windowCounts{}
	require.Zero(t, c.longest())
	c.add(time.Minute, +1)
	c.add(time.Second, +1)
	c.add(time.Minute, +1)
	c.add(time.Hour, +1)
	require.Equal(t, time.Hour, c.longest())
	c.add(time.Hour, -1)
	require.Equal(t, time.Minute, c.longest(), "removing the longest")
	c.add(time.Minute, -1)
	require.Equal(t, time.Minute, c.longest(), "one of two is left")
	c.add(time.Minute, -1)
	require.Equal(t, time.Second, c.longest())
	c.add(time.Hour, -1) // not held: ignored
	c.add(time.Second, -1)
	require.Zero(t, c.longest())
	require.Empty(t, c.vals)
	var none *windowCounts
	require.Zero(t, none.longest())
}
