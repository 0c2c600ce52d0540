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
	tot, err := CollectGarbage(context.Background(), h.raft, h.store.Snapshot(), GCConfig{}.Cutoffs(now, true), 6, now)
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

// TestGCTrimsJobVersions: a job registered while more versions were kept
// than now (job_tracked_versions lowered) is trimmed by the collector to
// the newest it keeps, through raft; the current version stays.
func TestGCTrimsJobVersions(t *testing.T) {
	h := newHarness(t, nil)
	for i := range 5 {
		j := testJob("web", "service")
		j.Meta = map[string]string{"v": string(rune('a' + i))}
		h.apply(registerJob(j))
	}
	require.Len(t, h.store.Snapshot().JobVersions("default", "web"), 5)
	now := h.clock.Now()
	tot, err := CollectGarbage(context.Background(), h.raft, h.store.Snapshot(), GCConfig{}.Cutoffs(now, false), 2, now)
	require.NoError(t, err)
	require.Equal(t, 3, tot.Versions)
	var kept []uint64
	for _, v := range h.store.Snapshot().JobVersions("default", "web") {
		kept = append(kept, v.Version)
	}
	require.Equal(t, []uint64{4, 3}, kept, "the newest stay")
	require.Equal(t, uint64(4), h.store.Snapshot().JobByID("default", "web").Version)

	tot, err = CollectGarbage(context.Background(), h.raft, h.store.Snapshot(), GCConfig{}.Cutoffs(now, false), 2, now)
	require.NoError(t, err)
	require.Zero(t, tot.Index, "nothing more to trim: nothing proposed")
}
