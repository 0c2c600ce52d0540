package agent

import (
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// derefPaths follows each dotted path of pointer, struct and map fields
// (a map step is the key) from v, failing where a pointer or map entry on
// the way is nil: the fields Nomad's CLI dereferences without a check.
func derefPaths(t *testing.T, what string, v any, paths ...string) {
	t.Helper()
	for _, path := range paths {
		cur := reflect.ValueOf(v)
		for _, step := range strings.Split(path, ".") {
			for cur.Kind() == reflect.Pointer {
				require.False(t, cur.IsNil(), "%s: nil on the way to %s", what, path)
				cur = cur.Elem()
			}
			switch cur.Kind() {
			case reflect.Map:
				cur = cur.MapIndex(reflect.ValueOf(step))
				require.True(t, cur.IsValid(), "%s: no %q on the way to %s", what, step, path)
			case reflect.Struct:
				cur = cur.FieldByName(step)
				require.True(t, cur.IsValid(), "%s: no field %q in %s", what, step, path)
			default:
				t.Fatalf("%s: %s: cannot step into a %s", what, path, cur.Kind())
			}
		}
		if cur.Kind() == reflect.Pointer {
			require.False(t, cur.IsNil(), "%s: %s is nil", what, path)
		}
	}
}

// TestNomadShapesNodeAndAlloc reads a node and its running allocation with
// Nomad's Go client and dereferences what Nomad's `node status -verbose`,
// `node status -stats` (computeNodeTotalResources, getAllocatedResources,
// getHostResources) and `alloc status` do; the group's port is in
// AllocatedResources.Shared.Ports.
func TestNomadShapesNodeAndAlloc(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	job := nomad.NewServiceJob("shapes", "shapes", "global", 50)
	tg := nomad.NewTaskGroup("g", 1)
	tg.Networks = []*nomad.NetworkResource{{DynamicPorts: []nomad.Port{{Label: "http", To: -1}}}}
	task := nomad.NewTask("t", "exec").
		SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", "while true; do sleep 0.2; done"}).
		Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
	task.KillTimeout = ptr(2 * time.Second)
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "shapes", "running")

	stubs, _, err := c.Nodes().List(nil)
	require.NoError(t, err)
	require.Len(t, stubs, 1)
	derefPaths(t, "node stub", stubs[0], "NodeResources", "ReservedResources")

	node, _, err := c.Nodes().Info(a.Node().GetID(), nil)
	require.NoError(t, err)
	derefPaths(t, "node", node, "Resources.CPU", "Resources.MemoryMB", "Resources.DiskMB",
		"Reserved.CPU", "Reserved.MemoryMB", "Reserved.DiskMB", "NodeResources", "ReservedResources")
	require.Equal(t, node.NodeResources.Cpu.CpuShares, int64(*node.Resources.CPU))
	require.Equal(t, node.NodeResources.Memory.MemoryMB, int64(*node.Resources.MemoryMB))

	onNode, _, err := c.Nodes().Allocations(node.ID, nil)
	require.NoError(t, err)
	require.Len(t, onNode, 1)
	for _, al := range onNode {
		derefPaths(t, "node's alloc", al, "Resources.CPU", "Resources.MemoryMB", "Resources.DiskMB")
	}
	require.Equal(t, 100, *onNode[0].Resources.CPU)
	require.Equal(t, 64, *onNode[0].Resources.MemoryMB)

	alloc, _, err := c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)
	derefPaths(t, "alloc", alloc, "Resources.DiskMB", "TaskResources.t.CPU", "TaskResources.t.MemoryMB",
		"Metrics", "AllocatedResources.Tasks.t", "Job")
	require.Equal(t, int64(100), alloc.AllocatedResources.Tasks["t"].Cpu.CpuShares)
	require.Len(t, alloc.AllocatedResources.Shared.Ports, 1)
	p := alloc.AllocatedResources.Shared.Ports[0]
	require.Equal(t, "http", p.Label)
	require.Positive(t, p.Value)
	require.Equal(t, p.Value, p.To, "To -1 maps to the host port")
	require.NotEmpty(t, p.HostIP)
	require.Len(t, alloc.AllocatedResources.Shared.Networks, 1)
	require.Equal(t, p.Value, alloc.AllocatedResources.Shared.Networks[0].DynamicPorts[0].Value)
}

// TestNomadLeaderDevAgent: a dev agent's /v1/status/leader names the
// address its member row shows (Addr and Tags "port"), as Nomad's `server
// members` compares them, and the row's leader tag says so.
func TestNomadLeaderDevAgent(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Dev = true
	a := startAgent(t, cfg)
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	leader, err := c.Status().Leader()
	require.NoError(t, err)
	require.NotContains(t, leader, "inmem")
	members, err := c.Agent().Members()
	require.NoError(t, err)
	require.Len(t, members.Members, 1)
	m := members.Members[0]
	require.Equal(t, net.JoinHostPort(m.Addr, m.Tags["port"]), leader)
	require.Equal(t, "true", m.Tags["leader"])
	region, err := c.Status().RegionLeader("global")
	require.NoError(t, err)
	require.Equal(t, leader, region)
}

// TestNomadLeaderBeforeElection: a dev agent whose API serves before its
// raft runs answers /v1/status/leader with Nomad's 500 "No cluster
// leader" (not "" with 200), which Nomad's client returns as an error.
func TestNomadLeaderBeforeElection(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Dev, cfg.Client = true, false
	a, err := New(cfg)
	require.NoError(t, err)
	defer a.Shutdown()
	require.NoError(t, a.boot())
	for _, step := range a.startSteps() {
		if step.name == "http-listen" || step.name == "http" {
			require.NoError(t, step.run(), step.name)
		}
	}
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	leader, err := c.Status().Leader()
	require.ErrorContains(t, err, "500")
	require.ErrorContains(t, err, "No cluster leader")
	require.Empty(t, leader)
}
