package server

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/messages"
)

// TestNodeRegistrationIsOneRaftEntry: a node's registration is one raft
// entry, whatever the number of system jobs, and that entry carries one
// evaluation per system job that is not stopped (before, a registration
// with two or more such jobs took a second, UpsertEvals, entry).
func TestNodeRegistrationIsOneRaftEntry(t *testing.T) {
	for _, systemJobs := range []int{0, 1, 3} {
		t.Run(fmt.Sprintf("%d system jobs", systemJobs), func(t *testing.T) {
			h := newHarness(t, nil)
			var want []string
			for i := range systemJobs {
				id := fmt.Sprintf("sys%d", i)
				h.apply(registerJob(testJob(id, "system")))
				want = append(want, id)
			}
			h.apply(registerJob(testJob("web", "service")))
			stopped := testJob("old", "system")
			stopped.Stop = true
			h.apply(registerJob(stopped))
			h.lead()
			before := len(h.raft.log())

			resp, ok := h.request(&messages.RegisterNodeRequest{Node: testNode("n1")}).(*messages.RegisterNodeResponse)
			require.True(t, ok)
			require.Nil(t, resp.GetError())
			require.Positive(t, resp.GetHeartbeatTTL())
			require.Equal(t, uint64(before+1), resp.GetIndex(), "the registration is the next entry, and its only one")

			entry := h.raft.log()[before]
			reg := entry.GetRegisterNode()
			require.NotNil(t, reg, "entry %d is %T", resp.GetIndex(), entry.GetCmd())
			require.Nil(t, reg.GetEval(), "new entries use Evals")
			var got []string
			for _, e := range reg.GetEvals() {
				require.Equal(t, "node-update", e.GetTriggeredBy())
				require.Equal(t, "n1", e.GetNodeID())
				require.NotNil(t, h.store.Snapshot().EvalByID(e.GetID()), "stored with the node")
				got = append(got, e.GetJobID())
			}
			require.ElementsMatch(t, want, got)
			for _, c := range h.raft.log() {
				for _, e := range c.GetUpsertEvals().GetEvals() {
					require.NotEqual(t, "node-update", e.GetTriggeredBy(), "no second entry for the registration's evaluations")
				}
			}
			require.NotNil(t, h.store.Snapshot().NodeByID("n1"))
		})
	}
}

// TestFollowerAnswersNotLeader: every request a server answers only as
// the leader gets not_leader with the leader's address from a follower,
// and nothing is committed.
func TestFollowerAnswersNotLeader(t *testing.T) {
	cases := []struct {
		req  proto.Message
		resp func(any) *messages.Error
	}{
		{&messages.ApplyRequest{Command: registerJob(testJob("web", "service"))},
			func(r any) *messages.Error { return r.(*messages.ApplyResponse).GetError() }},
		{&messages.RegisterNodeRequest{Node: testNode("n1")},
			func(r any) *messages.Error { return r.(*messages.RegisterNodeResponse).GetError() }},
		{&messages.NodeHeartbeat{NodeID: "n1"},
			func(r any) *messages.Error { return r.(*messages.NodeHeartbeatResponse).GetError() }},
		{&messages.UpdateAllocsRequest{Allocs: []*messages.Allocation{{ID: "a1", ClientStatus: "running"}}},
			func(r any) *messages.Error { return r.(*messages.UpdateAllocsResponse).GetError() }},
		{&messages.UpsertPluginInstances{NodeID: "n1"},
			func(r any) *messages.Error { return r.(*messages.UpsertPluginInstancesResponse).GetError() }},
		{&messages.VolumeClaimRequest{VolumeID: "v1"},
			func(r any) *messages.Error { return r.(*messages.VolumeClaimResponse).GetError() }},
		{&messages.VolumeNodeDetachedRequest{VolumeID: "v1"},
			func(r any) *messages.Error { return r.(*messages.VolumeOpResponse).GetError() }},
		{&messages.VolumeOpRequest{VolumeID: "v1"},
			func(r any) *messages.Error { return r.(*messages.VolumeOpResponse).GetError() }},
	}
	h := newHarness(t, nil)
	for _, c := range cases {
		t.Run(fmt.Sprintf("%T", c.req), func(t *testing.T) {
			e := c.resp(h.request(c.req))
			require.Equal(t, remote.CodeNotLeader, e.GetCode())
			require.Equal(t, "10.0.0.1:4647", e.GetLeaderRPCAddr())
		})
	}
	require.Empty(t, h.raft.log())
}

// TestLeaderCommitsForwardedCommand: a forwarded job registration is
// committed and answered with what the follower rebuilds its result from.
func TestLeaderCommitsForwardedCommand(t *testing.T) {
	h := newHarness(t, nil)
	h.lead()
	cmd := registerJob(testJob("web", "service"))
	cmd.GetRegisterJob().Eval = &messages.Evaluation{ID: "e1", Namespace: "default", JobID: "web", Type: "service", Status: "pending"}
	resp := h.request(&messages.ApplyRequest{Command: cmd}).(*messages.ApplyResponse)
	require.Nil(t, resp.GetError())
	require.Equal(t, "e1", resp.GetEvalID())
	require.Equal(t, uint64(1), resp.GetIndex())
	require.NotNil(t, h.store.Snapshot().JobByID("default", "web"))
}

// TestHeartbeatOfUnknownNode: the leader answers not_found for a node it
// has no record or actor of, so the client registers again.
func TestHeartbeatOfUnknownNode(t *testing.T) {
	h := newHarness(t, nil)
	h.lead()
	e := h.request(&messages.NodeHeartbeat{NodeID: "nope"}).(*messages.NodeHeartbeatResponse).GetError()
	require.Equal(t, remote.CodeNotFound, e.GetCode())
}
