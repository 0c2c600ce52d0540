package e2e

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestClusterFailoverReads kills the leader of 3 servers (no clients) with
// SIGKILL and, at once, through Nomad's Go client:
//   - default reads of an existing job and of the jobs list on a follower
//     wait and answer the job once a new leader has finished its barrier
//     (or 500 "No cluster leader" past the hold timeout), never a 404 or
//     an empty list;
//   - ?stale reads on that follower answer at once, X-Nomad-LastContact
//     growing while the leader is gone, and X-Nomad-KnownLeader false
//     only while the server knows none;
//   - a job registered through the other follower during the election
//     (forwarded over RPC) waits for the new leader and is applied once,
//     and a job deregistered through the first one (passed on over HTTP)
//     is stopped;
//   - /v1/status/leader names the new leader on every server and the
//     members' leader tag matches.
//
// Then the killed server restarts on its data dir: default reads on it,
// sent as soon as it listens, answer both jobs (never a 404), and all 3
// servers agree on the leader again.
func TestClusterFailoverReads(t *testing.T) {
	dataRoot := t.TempDir()
	tc := startAgents(t, dataRoot, 3, 0)
	old := tc.leader(t)
	var followers []*agentProc
	for _, s := range tc.servers {
		if s != old {
			followers = append(followers, s)
		}
	}
	reader, writer := nomadClient(t, followers[0]), nomadClient(t, followers[1])
	for _, id := range []string{"kept", "gone"} {
		_, _, err := reader.Jobs().Register(parkedJob(id), nil)
		require.NoError(t, err)
	}
	tc.eventually(t, settleTimeout, "every server holds jobs kept and gone", func() (bool, string) {
		for _, s := range tc.servers {
			for _, id := range []string{"kept", "gone"} {
				if _, _, err := nomadClient(t, s).Jobs().Info(id, &nomad.QueryOptions{AllowStale: true}); err != nil {
					return false, fmt.Sprintf("%s: job %s: %v", s.Name, id, err)
				}
			}
		}
		return true, ""
	})

	old.Kill(t)
	killedAt := time.Now()
	type writeResult struct {
		resp *nomad.JobRegisterResponse
		err  error
		took time.Duration
	}
	wrote := make(chan writeResult, 1)
	go func() { // (c) a write during the election
		resp, _, err := writer.Jobs().Register(parkedJob("during"), nil)
		wrote <- writeResult{resp, err, time.Since(killedAt)}
	}()
	stopped := make(chan writeResult, 1)
	go func() { // (c) a write that the follower passes on over HTTP (it reads the job first)
		_, _, err := reader.Jobs().Deregister("gone", false, nil)
		stopped <- writeResult{err: err, took: time.Since(killedAt)}
	}()
	read := make(chan readOutcome, 1)
	go func() { read <- readUntilAnswered(reader, "kept", false, formTimeout) }() // (a)

	// (b) ?stale on the same follower, until it names a new leader.
	samples := sampleStale(t, reader, "kept", old.RaftAddr(), killedAt, formTimeout)
	t.Logf("?stale on %s after killing leader %s:\n%s", followers[0].Name, old.Name, describeSamples(samples))
	gone := samples[:len(samples)-1]
	require.NotEmpty(t, gone, "the follower named a new leader at its first sample")
	forgot := false
	for i, s := range gone {
		if i > 0 {
			require.GreaterOrEqual(t, s.lastContact, gone[i-1].lastContact, "X-Nomad-LastContact shrank with the leader gone")
		}
		if !s.known {
			forgot = true
			// It knows no leader: raft cleared the dead one.
			require.NotEqual(t, old.RaftAddr(), s.leader, "KnownLeader false, yet status/leader names the old leader")
		} else if forgot {
			t.Fatalf("KnownLeader true again before a new leader:\n%s", describeSamples(samples))
		}
	}
	require.Greater(t, gone[len(gone)-1].lastContact, gone[0].lastContact, "X-Nomad-LastContact did not grow with the leader gone")
	require.GreaterOrEqual(t, gone[len(gone)-1].lastContact, 200*time.Millisecond)
	_, meta, err := reader.Jobs().Info("kept", &nomad.QueryOptions{AllowStale: true})
	require.NoError(t, err)
	require.True(t, meta.KnownLeader, "?stale after the election")
	require.Less(t, meta.LastContact, contactBound, "?stale after the election")

	r := <-read
	require.NoError(t, r.err, "a default read on follower %s right after the leader died", followers[0].Name)
	t.Logf("default reads on %s answered the job %d ms after the kill (%d no-leader answers)", followers[0].Name, r.took.Milliseconds(), r.noLeader)

	w := <-wrote
	require.NoError(t, w.err, "a job registered through %s during the election", followers[1].Name)
	t.Logf("register through %s during the election answered %d ms after the kill", followers[1].Name, w.took.Milliseconds())
	requireRegisteredOnce(t, reader, "during", w.resp)
	w = <-stopped
	require.NoError(t, w.err, "a job deregistered through %s during the election", followers[0].Name)
	t.Logf("deregister through %s during the election answered %d ms after the kill", followers[0].Name, w.took.Milliseconds())
	stoppedJob, _, err := reader.Jobs().Info("gone", nil)
	require.NoError(t, err)
	require.True(t, *stoppedJob.Stop, "job gone after its deregistration")

	survivors := tc.liveServers()
	var leader string
	tc.eventually(t, formTimeout, "survivors agree on the new leader", func() (bool, string) {
		l, ok, why := leaderAgreed(t, survivors)
		leader = l
		return ok, why
	})
	require.NotEqual(t, old.RaftAddr(), leader)

	// (d) the killed server comes back on its data dir.
	back := restartServer(t, tc, old, dataRoot)
	restarted := time.Now()
	for _, id := range []string{"kept", "during"} {
		r := readUntilAnswered(nomadClient(t, back), id, true, formTimeout)
		require.NoError(t, r.err, "a default read of job %s on restarted %s", id, back.Name)
		t.Logf("restarted %s answered job %s %d ms after its start (%d refused, %d no-leader)", back.Name, id,
			time.Since(restarted).Milliseconds(), r.refused, r.noLeader)
	}
	tc.eventually(t, formTimeout, "all 3 servers agree on the leader", func() (bool, string) {
		l, ok, why := leaderAgreed(t, tc.servers)
		leader = l
		return ok, why
	})
	t.Logf("all 3 servers name leader %s, %.1f s after the kill", leader, time.Since(killedAt).Seconds())
}

// requireRegisteredOnce checks that job id, registered with answer resp,
// is version 0 with one version and one registration evaluation, resp's.
func requireRegisteredOnce(t *testing.T, c *nomad.Client, id string, resp *nomad.JobRegisterResponse) {
	t.Helper()
	job, _, err := c.Jobs().Info(id, nil)
	require.NoError(t, err)
	require.Equal(t, uint64(0), *job.Version)
	require.Equal(t, resp.JobModifyIndex, *job.JobModifyIndex)
	versions, _, _, err := c.Jobs().Versions(id, false, nil)
	require.NoError(t, err)
	require.Len(t, versions, 1, "job %s versions", id)
	evals, _, err := c.Jobs().Evaluations(id, nil)
	require.NoError(t, err)
	var registers []string
	for _, e := range evals {
		if e.TriggeredBy == "job-register" {
			registers = append(registers, e.ID)
		}
	}
	require.Equal(t, []string{resp.EvalID}, registers, "job %s's registration evaluations", id)
}

// restartServer starts server s of tc again, in its host, on its data dir
// under dataRoot, with the arguments startAgents gave it, and puts it in
// tc.servers in place of the killed one.
func restartServer(t *testing.T, tc *testCluster, s *agentProc, dataRoot string) *agentProc {
	t.Helper()
	args := []string{"agent", "-server", "-bootstrap-expect", strconv.Itoa(len(tc.servers))}
	for _, o := range tc.servers {
		if o != s {
			args = append(args, "-join", o.Host.Addr)
		}
	}
	back := startAgent(t, s.Host, s.Name, dataRoot, args)
	for i, o := range tc.servers {
		if o == s {
			tc.servers[i] = back
		}
	}
	return back
}
