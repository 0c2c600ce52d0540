package clientsim_test

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/agent/clientsim"
)

// TestRunSmall plays the whole bench at small scale against a real agent
// over the gRPC transport: 50 clients register and heartbeat, a job runs
// on them, the steady heartbeats write nothing to raft, and the 5 clients
// stopped are all marked down with node-update evaluations. Nothing here
// asserts how long anything took: every wait is a poll with a deadline.
func TestRunSmall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := clientsim.StartServer(ctx, clientsim.ServerConfig{Exe: troupeBin, Args: []string{"agent"},
		MinTTL: time.Second, Grace: 500 * time.Millisecond, MaxHeartbeatsPerSecond: 100})
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.Stop()) }()

	var progress bytes.Buffer
	res, err := clientsim.Run(ctx, srv, clientsim.Scenario{Nodes: 50, Stop: 5, Steady: 2 * time.Second,
		Poll: 50 * time.Millisecond, Progress: &progress})
	require.NoError(t, err, progress.String())

	require.Equal(t, 45, res.Allocs, "nine in ten nodes hold an allocation")
	require.NotZero(t, res.Steady.Heartbeats)
	require.Positive(t, res.Steady.RTT[0], "round trips are measured")
	require.Greater(t, res.Steady.RTT.Quantile(0.99), time.Duration(0))
	require.Zero(t, res.Steady.RaftEntries, "heartbeats that change nothing propose nothing")
	require.Positive(t, res.Steady.CPU, "the agent's CPU time is read from /proc")
	// Checked again here through the HTTP API: every stopped client is
	// down and, as each held an allocation, has its node-update evaluation.
	require.Len(t, res.Stopped, 5)
	evals, _, err := srv.API.Jobs().Evaluations(res.JobID, nil)
	require.NoError(t, err)
	byNode := map[string]bool{}
	for _, e := range evals {
		byNode[e.GetNodeID()] = byNode[e.GetNodeID()] || e.GetTriggeredBy() == "node-update"
	}
	for _, id := range res.Stopped {
		n, _, err := srv.API.Nodes().Info(id, nil)
		require.NoError(t, err)
		require.Equal(t, "down", n.GetStatus(), n.GetName())
		require.True(t, byNode[id], "node-update evaluation for %s", n.GetName())
	}
	var out bytes.Buffer
	res.Print(&out)
	require.Contains(t, out.String(), "steady: ")
	require.Contains(t, out.String(), "stop: 5 clients: all down with node-update evaluations")
}

// TestRunEndsWhenTheAgentDies: a run against an agent that is gone ends
// with ErrServer instead of waiting out its timeouts.
func TestRunEndsWhenTheAgentDies(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := clientsim.StartServer(ctx, clientsim.ServerConfig{Exe: troupeBin, Args: []string{"agent"}})
	require.NoError(t, err)
	defer srv.Stop()
	p, err := os.FindProcess(srv.PID())
	require.NoError(t, err)
	require.NoError(t, p.Kill())
	_, err = clientsim.Run(ctx, srv, clientsim.Scenario{Nodes: 3, Steady: time.Second})
	require.ErrorIs(t, err, clientsim.ErrServer)
}
