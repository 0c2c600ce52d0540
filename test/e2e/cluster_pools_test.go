package e2e

import (
	"fmt"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
)

// poolJob is an exec job of count spinning tasks in a node pool, for
// Nomad's client.
func poolJob(id, typ, pool string, count int) *nomad.Job {
	job := nomad.NewServiceJob(id, id, "global", 50)
	job.Type, job.NodePool, job.Datacenters = &typ, &pool, []string{"dc1"}
	task := nomad.NewTask("spin", "exec").
		SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", "while true; do sleep 1; done"}).
		Require(&nomad.Resources{CPU: new(50), MemoryMB: new(32)})
	job.AddTaskGroup(nomad.NewTaskGroup("spin", count).AddTask(task))
	return job
}

// onlyOn accepts running allocations on the given nodes, count on each.
func onlyOn(count int, nodeIDs ...string) allocCheck {
	return func(running, _ []*api.AllocListStub) (bool, string) {
		n := perNode(running)
		for _, id := range nodeIDs {
			if n[id] != count {
				return false, fmt.Sprintf("%d on node %s, want %d", n[id], short(id), count)
			}
		}
		return len(running) == count*len(nodeIDs), "allocations on other nodes"
	}
}

// TestClusterNodePools runs one server and two clients in pools x and y:
// each pool's jobs land on its client only, "all" on both, through
// Nomad's client.
func TestClusterNodePools(t *testing.T) {
	tc := startAgents(t, t.TempDir(), 1, 2, []string{"-node-pool", "x"}, []string{"-node-pool", "y"})
	ids := tc.nodeIDs(t)
	x, y := ids[tc.clients[0].Name], ids[tc.clients[1].Name]
	c, err := nomad.NewClient(&nomad.Config{Address: tc.server().HTTPAddr()})
	require.NoError(t, err)

	for pool, want := range map[string]string{"x": x, "y": y} {
		nodes, _, err := c.NodePools().ListNodes(pool, nil)
		require.NoError(t, err)
		require.Len(t, nodes, 1, "pool %s", pool)
		require.Equal(t, want, nodes[0].ID)
	}
	tests := []struct {
		job   *nomad.Job
		each  int
		nodes []string
	}{
		{poolJob("svc-y", "service", "y", 2), 2, []string{y}},
		{poolJob("sys-x", "system", "x", 1), 1, []string{x}},
		{poolJob("sys-all", "system", "all", 1), 1, []string{x, y}},
	}
	for _, tt := range tests {
		_, _, err := c.Jobs().Register(tt.job, nil)
		require.NoError(t, err, *tt.job.ID)
	}
	for _, tt := range tests {
		tc.waitRunning(t, *tt.job.ID, tt.each*len(tt.nodes), settleTimeout, onlyOn(tt.each, tt.nodes...))
	}
}
