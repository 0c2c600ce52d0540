package server

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// TestGCStopsCollectedNodesActor: collecting a down node stops the
// leader's actor for it and takes it out of the actor tree; its
// heartbeats are then refused as from an unknown node, and a node that
// registers again gets a new actor.
func TestGCStopsCollectedNodesActor(t *testing.T) {
	h := newHarness(t, nil)
	h.lead()
	resp := h.request(&messages.RegisterNodeRequest{Node: testNode("n1")}).(*messages.RegisterNodeResponse)
	require.Nil(t, resp.GetError())
	const path = "server/nodes/n1"
	inTree := func() bool {
		for _, in := range h.reg.Tree(h.sys) {
			if in.Path == path {
				return true
			}
		}
		return false
	}
	require.True(t, inTree(), "the node has its actor")

	h.apply(&messages.Command{Time: h.clock.Now().UnixNano(), Cmd: &messages.Command_UpdateNodeStatus{
		UpdateNodeStatus: &messages.UpdateNodeStatus{NodeID: "n1", Status: messages.NodeStatusDown}}})
	now := h.clock.Now()
	tot, err := CollectGarbage(context.Background(), h.raft, h.store.Snapshot(), GCConfig{}.Cutoffs(now, true), now)
	require.NoError(t, err)
	require.Equal(t, 1, tot.Nodes)
	require.Nil(t, h.store.Snapshot().NodeByID("n1"))

	require.Eventually(t, func() bool {
		_, live := h.sys.ProcessRegistry.GetLocal(path)
		return !live && !inTree()
	}, 5*time.Second, 5*time.Millisecond, "the collected node's actor still runs")
	hb := h.request(&messages.NodeHeartbeat{NodeID: "n1"}).(*messages.NodeHeartbeatResponse)
	require.Equal(t, string(messages.CodeNotFound), hb.GetError().GetCode())

	resp = h.request(&messages.RegisterNodeRequest{Node: testNode("n1")}).(*messages.RegisterNodeResponse)
	require.Nil(t, resp.GetError())
	require.True(t, inTree(), "a node registering again gets a new actor")
}
