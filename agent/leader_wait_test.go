package agent

import (
	"net/http"
	"os"
	osexec "os/exec"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// parkedJob is a job no node can run (its datacenter does not exist), so
// it stays registered without starting tasks.
func parkedJob(id string) *nomad.Job {
	job := loopJob(id)
	job.Datacenters = []string{"nowhere"}
	return job
}

// startNoWait starts an agent and returns at once, before any election.
func startNoWait(t *testing.T, cfg *Config) *Agent {
	t.Helper()
	a, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, a.Start())
	t.Cleanup(func() { _ = a.Shutdown() })
	return a
}

// TestRestartReadsWaitForLeader restarts a persistent single server and
// reads at once: the default reads wait for the election and the barrier
// (the store replays the log only then) and answer the job that exists,
// never a 404 or an empty list; a write sent at the same moment waits for
// the leader instead of failing with "not the raft leader", and one that
// reads the job first (deregister) finds it.
func TestRestartReadsWaitForLeader(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t, testConfig(t, dir))
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(parkedJob("kept"), nil)
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(parkedJob("gone"), nil)
	require.NoError(t, err)
	require.NoError(t, a.Shutdown())

	b := startNoWait(t, testConfig(t, dir))
	t.Logf("ready leader right after start: %v", b.readyLeader())
	c, err = nomad.NewClient(&nomad.Config{Address: "http://" + b.HTTPAddr()})
	require.NoError(t, err)
	wrote, stopped := make(chan error, 1), make(chan error, 1)
	go func() {
		_, _, err := c.Jobs().Register(parkedJob("fresh"), nil)
		wrote <- err
	}()
	go func() { // a write that reads the job first: no 404 before the log is replayed
		_, _, err := c.Jobs().Deregister("gone", false, nil)
		stopped <- err
	}()

	job, meta, err := c.Jobs().Info("kept", nil)
	require.NoError(t, err, "a default read right after a restart")
	require.Equal(t, "kept", *job.ID)
	require.True(t, meta.KnownLeader)
	require.Zero(t, meta.LastContact, "the leader answered")
	list, _, err := c.Jobs().List(nil)
	require.NoError(t, err)
	require.NotEmpty(t, list, "the jobs list right after a restart")
	require.NoError(t, <-wrote, "a write right after a restart")
	require.NoError(t, <-stopped, "a deregister right after a restart")
	_, _, err = c.Jobs().Info("fresh", nil)
	require.NoError(t, err)
}

// TestNoLeaderHoldTimeout: a server that expects 3 servers, alone, never
// elects a leader. A default read and a write wait the hold timeout and
// answer 500 "No cluster leader"; a ?stale read answers at once from the
// replica and says no leader is known.
//
// It runs alone in a child process of the test binary: starting the
// remote transport (a clustered agent) sets grpc's global logger, which
// races with the gRPC clients other tests' agents leave redialing.
func TestNoLeaderHoldTimeout(t *testing.T) {
	if os.Getenv("TROUPE_TEST_NOLEADER") != "1" {
		cmd := osexec.Command(os.Args[0], "-test.run", "^TestNoLeaderHoldTimeout$", "-test.count", "1", "-test.v")
		cmd.Env = append(os.Environ(), "TROUPE_TEST_NOLEADER=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "--- PASS: TestNoLeaderHoldTimeout")
		return
	}
	noLeaderHoldTimeout(t)
}

func noLeaderHoldTimeout(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Client = false
	cfg.BindAddr = "127.0.0.1"
	cfg.RPCPort, cfg.GossipPort, cfg.RaftPort, cfg.WANPort = freePort(t), freePort(t), freePort(t), freePort(t)
	cfg.BootstrapExpect = 3
	cfg.RPCHoldTimeout = 2 * time.Second
	a := startNoWait(t, cfg)
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	start := time.Now()
	_, _, err = c.Jobs().List(nil)
	require.ErrorContains(t, err, "500")
	require.ErrorContains(t, err, "No cluster leader")
	require.GreaterOrEqual(t, time.Since(start), cfg.RPCHoldTimeout, "the read waited the hold timeout")

	start = time.Now()
	_, _, err = c.Jobs().Register(parkedJob("w"), nil)
	require.ErrorContains(t, err, "No cluster leader")
	require.GreaterOrEqual(t, time.Since(start), cfg.RPCHoldTimeout, "the write waited the hold timeout")

	start = time.Now()
	list, meta, err := c.Jobs().List(&nomad.QueryOptions{AllowStale: true})
	require.NoError(t, err)
	require.Empty(t, list)
	require.False(t, meta.KnownLeader)
	require.Less(t, time.Since(start), cfg.RPCHoldTimeout, "a stale read does not wait")

	resp, err := http.Get("http://" + a.HTTPAddr() + "/v1/status/leader")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
}
