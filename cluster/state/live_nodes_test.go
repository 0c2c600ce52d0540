package state

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func nodeStatus(id, status string) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_UpdateNodeStatus{UpdateNodeStatus: &messages.UpdateNodeStatus{
		NodeID: id, Status: status}}}
}

// TestLiveNodes walks the node writes that change (or do not change) how
// many nodes are not down, then checks a restore rebuilds the count.
func TestLiveNodes(t *testing.T) {
	down := testNode("d", 1, 1)
	down.Status = messages.NodeStatusDown
	h := newHarness(t)
	steps := []struct {
		name string
		cmd  *messages.Command
		want int
	}{
		{"a registers", registerNode(testNode("a", 1, 1)), 1},
		{"b registers", registerNode(testNode("b", 1, 1)), 2},
		{"a registers again", registerNode(testNode("a", 1, 1)), 2},
		{"a goes down", nodeStatus("a", messages.NodeStatusDown), 1},
		{"a down again", nodeStatus("a", messages.NodeStatusDown), 1},
		{"a comes back by status", nodeStatus("a", messages.NodeStatusReady), 2},
		{"b disconnects (still live)", nodeStatus("b", "disconnected"), 2},
		{"b goes down", nodeStatus("b", messages.NodeStatusDown), 1},
		{"b re-registers ready", registerNode(testNode("b", 1, 1)), 2},
		{"a node registered down", registerNode(down), 2},
		{"eligibility changes nothing", &messages.Command{Cmd: &messages.Command_UpdateNodeEligibility{
			UpdateNodeEligibility: &messages.UpdateNodeEligibility{NodeID: "a", Eligibility: messages.NodeSchedulingIneligible}}}, 2},
		{"unknown node's status fails", nodeStatus("nope", messages.NodeStatusDown), 2},
	}
	for _, st := range steps {
		h.apply(st.cmd)
		require.Equal(t, st.want, h.snap().LiveNodes(), st.name)
	}
	old := h.snap()
	restored := newHarness(t)
	require.NoError(t, restored.fsm.Restore(io.NopCloser(bytes.NewReader(persist(t, h.fsm).Bytes()))))
	require.Equal(t, 2, restored.snap().LiveNodes(), "rebuilt on restore")
	h.apply(nodeStatus("a", messages.NodeStatusDown))
	require.Equal(t, 2, old.LiveNodes(), "an older snapshot keeps its count")
	require.Equal(t, 1, h.snap().LiveNodes())
}
