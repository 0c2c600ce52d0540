package state

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNodesListSharedUntilANodeChanges: snapshots of the same nodes share
// one list; a node written (or a restore) gives the next snapshot a new
// one, and a write transaction's own view sees its uncommitted node.
func TestNodesListSharedUntilANodeChanges(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 4000, 8192)))
	h.apply(registerNode(testNode("n2", 4000, 8192)))
	first := h.snap().Nodes()
	require.Len(t, first, 2)
	require.Same(t, &first[0], &h.snap().Nodes()[0], "no node changed: the same list")

	h.apply(registerJob(testJob("web", 100, 100), testEval("e1", "web", "pending")))
	require.Same(t, &first[0], &h.snap().Nodes()[0], "a job write leaves the node list as it was")

	down := testNode("n2", 4000, 8192)
	down.Status = "down"
	h.apply(registerNode(down))
	after := h.snap().Nodes()
	require.NotSame(t, &first[0], &after[0], "a node written: a new list")
	require.Equal(t, "down", after[1].Status)
	require.Equal(t, "ready", first[1].Status, "the old snapshot's list is untouched")

	w := newWriteTxn(h.fsm.store, h.fsm.store.Snapshot().Index()+1, 0, nil)
	w.putNode(testNode("n3", 4000, 8192))
	require.Len(t, w.read().Nodes(), 3, "a write transaction sees its own node")
	require.Len(t, h.snap().Nodes(), 2, "which no snapshot sees before the commit")
}

// TestNodesByPoolShared: a pool's nodes are filtered from the shared list
// once per change of the nodes table, sorted by ID.
func TestNodesByPoolShared(t *testing.T) {
	h := newHarness(t)
	for _, id := range []string{"n3", "n1", "n2"} {
		n := testNode(id, 4000, 8192)
		if id != "n2" {
			n.NodePool = "x"
		}
		h.apply(registerNode(n))
	}
	x := h.snap().NodesByPool("x")
	require.Equal(t, []string{"n1", "n3"}, []string{x[0].ID, x[1].ID})
	require.Same(t, &x[0], &h.snap().NodesByPool("x")[0], "the same list until a node changes")
	def := h.snap().NodesByPool("")
	require.Len(t, def, 1)
	require.Equal(t, "n2", def[0].ID)
	require.Len(t, h.snap().NodesByPool(NodePoolAll), 3)
	require.Empty(t, h.snap().NodesByPool("nope"))
}

// TestNodeByIDFromTheSharedList: one node's lookup reads the shared list
// once one was built for the snapshot's nodes, and memdb otherwise (a new
// node, a write transaction that wrote a node), never a stale node.
func TestNodeByIDFromTheSharedList(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 4000, 8192)))
	h.apply(registerNode(testNode("n2", 4000, 8192)))
	s := h.snap()
	require.Nil(t, s.builtNodeList(s.Index(TableNodes)), "no list built yet")
	require.Equal(t, "n1", s.NodeByID("n1").ID)
	s.Nodes()
	require.NotNil(t, s.builtNodeList(s.Index(TableNodes)))
	require.Same(t, s.Nodes()[1], s.NodeByID("n2"), "from the list")
	require.Nil(t, s.NodeByID("n9"))

	down := testNode("n2", 4000, 8192)
	down.Status = "down"
	h.apply(registerNode(down))
	require.Equal(t, "down", h.snap().NodeByID("n2").Status, "the old list is not used for new nodes")
	require.Equal(t, "ready", s.NodeByID("n2").Status, "the old snapshot reads its own")

	h.snap().Nodes()
	w := newWriteTxn(h.fsm.store, h.fsm.store.Snapshot().Index()+1, 0, nil)
	require.NotNil(t, w.sharedNodes())
	require.Equal(t, "down", w.node("n2").Status)
	w.putNode(testNode("n3", 4000, 8192))
	require.Nil(t, w.sharedNodes(), "a transaction that wrote a node reads memdb")
	require.Equal(t, "n3", w.node("n3").ID)
}
