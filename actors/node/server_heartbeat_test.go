package node

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// TestHeartbeatChangingNothingProposesNothing: heartbeats of a ready node
// only move its deadline: nothing goes to raft, and each answer carries a
// TTL scaled by the live node count the state keeps (10,000 nodes at 50
// heartbeats a second: 200 s), so no heartbeat walks the nodes.
func TestHeartbeatChangingNothingProposesNothing(t *testing.T) {
	clock := actors.NewFakeClock(time.Unix(1000, 0))
	view := &fakeView{node: &messages.Node{ID: "n1", Status: "ready"}, live: 10000,
		job:    &messages.Job{ID: "web", Namespace: "default", Type: "service"},
		allocs: []*messages.Allocation{{ID: "a1", JobID: "web", Namespace: "default", DesiredStatus: "run", ClientStatus: "running"}}}
	prop := &flakyProposer{}
	cfg := HeartbeatConfig{MinTTL: 10 * time.Second, MaxHeartbeatsPerSecond: 50, Grace: 10 * time.Second, FailoverTTL: time.Minute}
	sys, pid, stop := spawnNodeServer(t, clock, view, prop, cfg)
	defer stop()

	for range 5 {
		res, err := sys.Root.RequestFuture(pid, &messages.NodeHeartbeat{NodeID: "n1"}, 5*time.Second).Result()
		require.NoError(t, err)
		hb, ok := res.(*messages.NodeHeartbeatResponse)
		require.True(t, ok, "%T", res)
		require.Equal(t, int64(200*time.Second), hb.GetHeartbeatTTL())
		require.False(t, hb.GetResendAllocs())
		clock.Advance(100 * time.Second) // well within TTL + grace
	}
	prop.mu.Lock()
	defer prop.mu.Unlock()
	require.Empty(t, prop.calls, "a heartbeat that changes nothing proposes nothing")
}
