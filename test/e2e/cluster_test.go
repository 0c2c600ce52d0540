package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/api"
)

// The cluster scenarios run real agents in network namespaces (package
// clustertest): 3 servers and 2 clients, one host each. They skip unless
// root (and fail under CI=true). Every agent's log is printed when one
// fails; TROUPE_E2E_LOG_DIR keeps them.

// spinAllocs is the size of the job every scenario runs.
const spinAllocs = 4

// TestClusterForms checks the servers, raft peers and nodes through the
// CLI, then runs a job submitted to a follower on both clients.
func TestClusterForms(t *testing.T) {
	tc := startCluster(t, 2)
	leader, follower := tc.leader(t), tc.follower(t)

	out, code := tc.cli(t, follower, "server members")
	require.Equal(t, 0, code, out)
	rows := tableRows(out)
	require.Len(t, rows, 3, "server members:\n%s", out)
	var leaders []string
	for _, r := range rows {
		require.GreaterOrEqual(t, len(r), 5, "server members row %v:\n%s", r, out)
		require.Equal(t, "alive", r[3], "server members:\n%s", out)
		if r[4] == "true" {
			leaders = append(leaders, r[1])
		}
	}
	require.Equal(t, []string{leader.Host.Addr}, leaders, "server members, leader at %s:\n%s", leader.Host.Addr, out)

	out, code = tc.cli(t, follower, "operator raft list-peers")
	require.Equal(t, 0, code, out)
	rows = tableRows(out)
	require.Len(t, rows, 3, "list-peers:\n%s", out)
	leaders = nil
	for _, r := range rows { // Node ID Address State Voter RaftProtocol
		require.Len(t, r, 6, "list-peers row %v:\n%s", r, out)
		require.Equal(t, "true", r[4], "list-peers, every server a voter:\n%s", out)
		if r[3] == "leader" {
			leaders = append(leaders, r[2])
		}
	}
	require.Equal(t, []string{leader.RaftAddr()}, leaders, "list-peers:\n%s", out)

	out, code = tc.cli(t, follower, "node status")
	require.Equal(t, 0, code, out)
	rows = tableRows(out)
	require.Len(t, rows, 2, "node status:\n%s", out)
	for _, r := range rows { // ID, Node Pool, DC, Name, Class, Drain, Eligibility, Status
		require.Equal(t, "ready", r[len(r)-1], "node status:\n%s", out)
		detail, code := tc.cli(t, follower, "node status", r[0])
		require.Equal(t, 0, code, detail)
		require.Regexp(t, `(?m)^Drivers\s+= (.*,)?exec(,|$)`, detail)
	}

	ids := tc.nodeIDs(t)
	tc.submit(t, follower, spinJob{ID: "spin", Count: spinAllocs})
	allocs := tc.waitRunning(t, "spin", spinAllocs, settleTimeout, onEachNode(ids["client0"], ids["client1"]))
	t.Logf("submitted to follower %s: %s", follower.Name, describeAllocs(allocs))
}

// TestClusterLeaderKill kills the leader: the two others elect a new one,
// the running allocations are untouched, and a new job still runs.
func TestClusterLeaderKill(t *testing.T) {
	tc := startCluster(t, 2)
	tc.submit(t, tc.follower(t), spinJob{ID: "spin", Count: spinAllocs})
	before := allocIDs(tc.waitRunning(t, "spin", spinAllocs, settleTimeout, nil))

	old := tc.leader(t)
	killedAt := time.Now()
	old.Kill(t)
	var next string
	tc.eventually(t, formTimeout, "a new leader after "+old.Name+" died", func() (bool, string) {
		seen := map[string]bool{}
		for _, s := range tc.liveServers() {
			l, err := s.API.Status().Leader()
			if err != nil || l == "" || l == old.RaftAddr() {
				return false, fmt.Sprintf("%s names leader %q (%v)", s.Name, l, err)
			}
			seen[l], next = true, l
		}
		return len(seen) == 1, fmt.Sprintf("survivors name different leaders: %v", seen)
	})
	t.Logf("leader kill -> new leader: %.1f s (%s, was %s)", time.Since(killedAt).Seconds(), next, old.RaftAddr())

	sameAllocs := func(running, all []*api.AllocListStub) (bool, string) {
		return equalIDs(before, running) && equalIDs(before, all), "allocations changed"
	}
	tc.waitRunning(t, "spin", spinAllocs, settleTimeout, sameAllocs)

	tc.submit(t, tc.server(), spinJob{ID: "spin2", Count: 2})
	tc.waitRunning(t, "spin2", 2, settleTimeout, nil)
	t.Logf("leader kill -> second job running: %.1f s", time.Since(killedAt).Seconds())

	all, err := tc.jobAllocs("spin")
	require.NoError(t, err)
	require.Equal(t, before, allocIDs(all), "first job's allocations: %s", describeAllocs(all))
	require.Equal(t, before, allocIDs(running(all)), "first job's allocations: %s", describeAllocs(all))
}

// TestClusterClientKill kills a client's agent: its node goes down, its
// allocations are lost and replaced on the other client.
func TestClusterClientKill(t *testing.T) {
	tc := startCluster(t, 2)
	victim, survivor := tc.clients[0], tc.clients[1]
	ids, allocs := tc.spinOnBothClients(t, spinJob{ID: "spin", Count: spinAllocs})
	lost := allocsOn(allocs, ids[victim.Name])

	killedAt := time.Now()
	victim.Kill(t)
	tc.waitNodeStatus(t, victim, "down", settleTimeout)
	t.Logf("client kill -> node down: %.1f s", time.Since(killedAt).Seconds())

	final := tc.waitRunning(t, "spin", spinAllocs, settleTimeout, replacedOn(ids[survivor.Name], spinAllocs, lost))
	t.Logf("client kill -> replacement running: %.1f s (%s)", time.Since(killedAt).Seconds(), describeAllocs(final))
}

// TestClusterPartition cuts a client off the network: its node becomes
// disconnected when the job's group has a disconnect window, else down,
// and ready again once the network heals.
func TestClusterPartition(t *testing.T) {
	for _, tt := range []struct {
		name      string
		lostAfter string
		want      string
	}{
		{name: "disconnect lost_after 30s", lostAfter: "30s", want: "disconnected"},
		{name: "no disconnect block", want: "down"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := startCluster(t, 2)
			ids := tc.nodeIDs(t)
			victim := tc.clients[0]
			tc.submit(t, tc.server(), spinJob{ID: "spin", Count: spinAllocs, LostAfter: tt.lostAfter})
			tc.waitRunning(t, "spin", spinAllocs, settleTimeout, onEachNode(ids["client0"], ids["client1"]))

			cutAt := time.Now()
			require.NoError(t, victim.Host.Partition())
			tc.waitNodeStatus(t, victim, tt.want, settleTimeout)
			t.Logf("partition -> %s: %.1f s", tt.want, time.Since(cutAt).Seconds())
			// Either way the job runs its full count on the reachable
			// client: replacements (disconnect.replace defaults to true)
			// or lost allocations replaced.
			onSurvivor := func(running, _ []*api.AllocListStub) (bool, string) {
				n := perNode(running)
				return n[ids["client1"]] >= spinAllocs/2 && len(running) >= spinAllocs, fmt.Sprintf("%d running on client1", n[ids["client1"]])
			}
			tc.eventually(t, settleTimeout, "replacements on the reachable client", func() (bool, string) {
				all, err := tc.jobAllocs("spin")
				if err != nil {
					return false, err.Error()
				}
				ok, why := onSurvivor(running(all), all)
				n := perNode(running(all))
				return ok && n[ids["client1"]] == spinAllocs, why + ": " + describeAllocs(all)
			})
			t.Logf("partition -> replacements running: %.1f s", time.Since(cutAt).Seconds())

			healedAt := time.Now()
			require.NoError(t, victim.Host.Heal())
			tc.waitNodeStatus(t, victim, "ready", settleTimeout)
			t.Logf("heal -> ready: %.1f s", time.Since(healedAt).Seconds())
			// Reconciled: no duplicates, exactly the job's count runs.
			tc.waitRunning(t, "spin", spinAllocs, settleTimeout, nil)
			tc.eventually(t, settleTimeout, "no duplicate allocations after the heal", func() (bool, string) {
				all, err := tc.jobAllocs("spin")
				if err != nil {
					return false, err.Error()
				}
				live := 0
				for _, a := range all {
					if a.DesiredStatus == "run" && (a.ClientStatus == "running" || a.ClientStatus == "pending" || a.ClientStatus == "unknown") {
						live++
					}
				}
				return live == spinAllocs, describeAllocs(all)
			})
		})
	}
}

// equalIDs says whether the allocations have exactly the sorted IDs want.
func equalIDs(want []string, allocs []*api.AllocListStub) bool {
	return slices.Equal(want, allocIDs(allocs))
}
