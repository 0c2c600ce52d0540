package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors/node"
)

// These tests run 3 servers and 2 clients with failure detection at its
// defaults (heartbeat TTL 10 s + grace 10 s, memberlist's LAN timing) and
// log how long detection takes; the figures are measured, never asserted
// (scripts/failure-detect.sh runs them several times for the medians).

// gossipPort is the agents' memberlist port.
const gossipPort = 4648

// detectTimeout bounds each wait of these tests: the heartbeat deadline
// alone (TTL, jitter and grace) takes up to 21 s.
const detectTimeout = 60 * time.Second

// TestClusterDetectClientCrash: a client host dies (link, agent and tasks
// at once): gossip reports it failed, the leader's probes fail, the node
// goes down and its allocations run again on the other client.
func TestClusterDetectClientCrash(t *testing.T) {
	measure(t, func(t *testing.T, f *figures) {
		tc := startDefaultCluster(t, 2)
		victim, survivor := tc.clients[0], tc.clients[1]
		ids, allocs := tc.spinOnBothClients(t, spinJob{ID: "spin", Count: spinAllocs})
		lost := allocsOn(allocs, ids[victim.Name])

		crashedAt := time.Now()
		victim.killed = true
		require.NoError(t, victim.Host.Crash())
		tc.waitNodeStatus(t, victim, "down", detectTimeout)
		f.add(t, "crash -> node down", time.Since(crashedAt))
		t.Logf("node %s down: %s", victim.Name, tc.nodeStub(t, victim.Name).StatusDescription)
		tc.waitRunning(t, "spin", spinAllocs, detectTimeout, replacedOn(ids[survivor.Name], spinAllocs, lost))
		f.add(t, "crash -> running elsewhere", time.Since(crashedAt))
	})
}

// TestClusterDetectGossipFlap: gossip reports a healthy client failed (its
// gossip port is dropped, its RPC port is not): the leader probes it, it
// answers, and it stays ready with its allocations untouched, through two
// rounds of evidence.
func TestClusterDetectGossipFlap(t *testing.T) {
	tc := startDefaultCluster(t, 2)
	victim := tc.clients[0]
	ids, allocs := tc.spinOnBothClients(t, spinJob{ID: "spin", Count: spinAllocs})
	before := allocIDs(allocs)
	leader := tc.leader(t)

	blockedAt := time.Now()
	blockGossip(t, victim.Host)
	tc.eventually(t, 2*detectTimeout, "two refuted probes of "+victim.Name, func() (bool, string) {
		n := tc.nodeStub(t, victim.Name)
		require.Equal(t, "ready", n.Status, "node %s: %s", victim.Name, n.StatusDescription)
		all, err := tc.jobAllocs("spin")
		require.NoError(t, err)
		require.Equal(t, before, allocIDs(running(all)), "allocations: %s", describeAllocs(all))
		require.Equal(t, before, allocIDs(all), "no replacement: %s", describeAllocs(all))
		refuted := logLines(t, leader, node.LogProbeRefuted, ids[victim.Name])
		return len(refuted) >= 2, fmt.Sprintf("%d refuted probes", len(refuted))
	})
	failed := logLines(t, leader, "membership: member failed", victim.Name)
	require.NotEmpty(t, failed, "the leader's gossip never reported %s failed", victim.Name)
	refuted := logLines(t, leader, node.LogProbeRefuted, ids[victim.Name])
	t.Logf("gossip blocked -> member failed: %.1f s; -> probes refuted at %.1f s and %.1f s; node ready, allocations untouched",
		failed[0].Time.Sub(blockedAt).Seconds(), refuted[0].Time.Sub(blockedAt).Seconds(), refuted[1].Time.Sub(blockedAt).Seconds())
	require.Empty(t, logLines(t, leader, node.LogProbeConfirmed, ids[victim.Name]))
}

// TestClusterDetectCutStopOnClientAfter: a client cut off with
// disconnect.stop_on_client_after = 10s stops its tasks 10 s after it last
// reached a server (plus the kill), the node goes disconnected, and the
// replacements run on the other client.
func TestClusterDetectCutStopOnClientAfter(t *testing.T) {
	measure(t, func(t *testing.T, f *figures) {
		tc := startDefaultCluster(t, 2)
		victim, survivor := tc.clients[0], tc.clients[1]
		ids, _ := tc.spinOnBothClients(t, spinJob{ID: "spin", Count: spinAllocs, StopOnClientAfter: "10s"})
		require.NotZero(t, spinTasks(t, victim.Host))

		cutAt := time.Now()
		require.NoError(t, victim.Host.Partition())
		var stoppedAt, missedAt, replacedAt time.Time
		var missed string
		tc.eventually(t, detectTimeout, "tasks stopped, node missed, replacements running", func() (bool, string) {
			now := time.Now()
			if stoppedAt.IsZero() && spinTasks(t, victim.Host) == 0 {
				stoppedAt = now
			}
			if n := tc.nodeStub(t, victim.Name); missedAt.IsZero() && n.Status != "ready" {
				missedAt, missed = now, n.Status+" ("+n.StatusDescription+")"
			}
			all, err := tc.jobAllocs("spin")
			require.NoError(t, err)
			if replacedAt.IsZero() && perNode(running(all))[ids[survivor.Name]] == spinAllocs {
				replacedAt = now
			}
			return !stoppedAt.IsZero() && !missedAt.IsZero() && !replacedAt.IsZero(),
				fmt.Sprintf("stopped %v, missed %v, replaced %v: %s", !stoppedAt.IsZero(), !missedAt.IsZero(), !replacedAt.IsZero(), describeAllocs(all))
		})
		stops := logLines(t, victim, node.LogStopOnClientAfter, "")
		require.NotEmpty(t, stops, "client %s never stopped for stop_on_client_after", victim.Name)
		f.add(t, "cut -> task stopped", stoppedAt.Sub(cutAt))
		f.add(t, "last contact -> task stopped", stoppedAt.Sub(stops[0].LastContact))
		f.add(t, "last contact -> stop ordered", stops[0].Time.Sub(stops[0].LastContact))
		f.add(t, "cut -> node missed", missedAt.Sub(cutAt))
		t.Logf("node %s: %s", victim.Name, missed)
		f.add(t, "cut -> replacement running", replacedAt.Sub(cutAt))
	})
}
