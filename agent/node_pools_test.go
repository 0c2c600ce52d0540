package agent

import (
	"net/http"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors/scheduler"
	"github.com/troupe-dev/troupe/cluster/state"
)

// The state store hands the scheduler a pool's nodes from its index.
var _ scheduler.NodePoolSource = (*state.Snap)(nil)

func TestConfigNodePool(t *testing.T) {
	tests := []struct {
		pool    string
		client  bool
		errText string
	}{
		{pool: "", client: true},
		{pool: "gpu", client: true},
		{pool: "all", client: true, errText: `cannot register in node pool "all"`},
		{pool: "a b", client: true, errText: `invalid name "a b"`},
		{pool: "all", client: false}, // a server has no node
	}
	for _, tt := range tests {
		t.Run(tt.pool, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Dev, cfg.Client, cfg.NodePool = true, tt.client, tt.pool
			err := cfg.Validate()
			if tt.errText == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrConfig)
			require.ErrorContains(t, err, "-node-pool")
			require.ErrorContains(t, err, tt.errText)
		})
	}
}

// poolJob is a service job of one long-running task in pool ("": none).
func poolJob(id, pool string) *nomad.Job {
	job := nomad.NewServiceJob(id, id, "global", 50)
	if pool != "" {
		job.NodePool = ptr(pool)
	}
	task := nomad.NewTask("t", "exec").
		SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", "while true; do sleep 0.2; done"}).
		Require(&nomad.Resources{CPU: ptr(50), MemoryMB: ptr(32)})
	task.KillTimeout = ptr(time.Second)
	job.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(task))
	return job
}

// waitEval follows an evaluation with blocking queries until it is no
// longer pending.
func waitEval(t *testing.T, c *nomad.Client, id string) *nomad.Evaluation {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var index uint64
	for time.Now().Before(deadline) {
		ev, meta, err := c.Evaluations().Info(id, &nomad.QueryOptions{WaitIndex: index, WaitTime: 2 * time.Second})
		require.NoError(t, err)
		if ev.Status != "pending" {
			return ev
		}
		index = meta.LastIndex
	}
	t.Fatalf("evaluation %s still pending", id)
	return nil
}

func statusCode(t *testing.T, err error) int {
	t.Helper()
	var ure nomad.UnexpectedResponseError
	require.ErrorAs(t, err, &ure)
	return ure.StatusCode()
}

// TestNodePoolsEndToEnd drives a dev agent whose client is in pool "x"
// with Nomad's own client: the pool exists because the node registered in
// it; a job in the empty pool "y" stays blocked, saying so, while jobs in
// "x" and in "all" run; pools in use cannot be deleted.
func TestNodePoolsEndToEnd(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.NodePool = "x"
	a := startAgent(t, cfg)
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	pools := c.NodePools()

	node, _, err := c.Nodes().Info(a.Node().GetID(), nil)
	require.NoError(t, err)
	require.Equal(t, "x", node.NodePool)
	x, _, err := pools.Info("x", nil)
	require.NoError(t, err, "created when the node registered")
	require.Empty(t, x.Description)
	_, err = pools.Register(&nomad.NodePool{Name: "y", Description: "no nodes"}, nil)
	require.NoError(t, err)
	inX, _, err := pools.ListNodes("x", nil)
	require.NoError(t, err)
	require.Len(t, inX, 1)
	require.Equal(t, a.Node().GetID(), inX[0].ID)
	inY, _, err := pools.ListNodes("y", nil)
	require.NoError(t, err)
	require.Empty(t, inY)

	// A job in y has no node to go to: blocked, naming the pool.
	resp, _, err := c.Jobs().Register(poolJob("in-y", "y"), nil)
	require.NoError(t, err)
	ev := waitEval(t, c, resp.EvalID)
	require.Equal(t, "complete", ev.Status)
	failed := ev.FailedTGAllocs["g"]
	require.NotNil(t, failed, "the group did not place")
	require.Equal(t, "y", failed.NodePool)
	require.Zero(t, failed.NodesInPool)
	require.Zero(t, failed.NodesEvaluated, "x's node is not evaluated for a job in y")
	require.NotEmpty(t, ev.BlockedEval)
	blocked, _, err := c.Evaluations().Info(ev.BlockedEval, nil)
	require.NoError(t, err)
	require.Equal(t, "blocked", blocked.Status)

	// Jobs in x and in all run on the node.
	for _, j := range []struct{ id, pool string }{{"in-x", "x"}, {"in-all", "all"}} {
		_, _, err := c.Jobs().Register(poolJob(j.id, j.pool), nil)
		require.NoError(t, err)
		alloc := waitAllocStatus(t, c, j.id, "running")
		require.Equal(t, a.Node().GetID(), alloc.NodeID)
		job, _, err := c.Jobs().Info(j.id, nil)
		require.NoError(t, err)
		require.Equal(t, j.pool, *job.NodePool)
	}
	jobsInX, _, err := pools.ListJobs("x", nil)
	require.NoError(t, err)
	require.Len(t, jobsInX, 1)
	require.Equal(t, "in-x", jobsInX[0].ID)
	allocs, _, err := c.Jobs().Allocations("in-y", false, nil)
	require.NoError(t, err)
	require.Empty(t, allocs, "in-y still has nowhere to run")

	// A pool that does not exist is refused.
	_, _, err = c.Jobs().Register(poolJob("nowhere", "nope"), nil)
	require.Equal(t, http.StatusBadRequest, statusCode(t, err))
	require.ErrorContains(t, err, `job "nowhere" is in nonexistent node pool "nope"`)

	// Pools in use stay, until what uses them is gone.
	_, err = pools.Delete("x", nil)
	require.Equal(t, http.StatusConflict, statusCode(t, err))
	require.ErrorContains(t, err, `node pool "x" has 1 node`)
	_, err = pools.Delete("y", nil)
	require.Equal(t, http.StatusConflict, statusCode(t, err))
	require.ErrorContains(t, err, `node pool "y" has non-terminal jobs: default/in-y`)
	_, err = pools.Delete("default", nil)
	require.Equal(t, http.StatusBadRequest, statusCode(t, err))
	_, _, err = c.Jobs().Deregister("in-y", false, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		j, _, err := c.Jobs().Info("in-y", nil)
		return err == nil && *j.Status == "dead"
	}, 20*time.Second, 20*time.Millisecond)
	_, err = pools.Delete("y", nil)
	require.NoError(t, err)
	_, _, err = pools.Info("y", nil)
	require.Equal(t, http.StatusNotFound, statusCode(t, err))
}
