package e2e

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/cluster/clustertest"
)

// restartTuning is clusterTuning with heartbeats long enough that a
// client agent killed and started again keeps its node ready (and its
// allocations), as a quick crash and restart does.
var restartTuning = []string{
	"-heartbeat-ttl", "30s", "-heartbeat-grace", "30s",
	"-gossip-interval", "100ms", "-raft-timeout", "500ms", "-log-level", "debug",
}

// restartClient starts a killed client agent again on its data dir, with
// the command line it had.
func (tc *testCluster) restartClient(t *testing.T, old *agentProc, dataRoot string) *agentProc {
	t.Helper()
	var servers []string
	for _, s := range tc.servers {
		servers = append(servers, s.Host.Addr)
	}
	args := append([]string{"agent", "-client", "-servers", strings.Join(servers, ","),
		"-data-dir", dataRoot + "/" + old.Name, "-bind", old.Host.Addr, "-node", old.Name}, restartTuning...)
	p, err := old.Host.StartSpec(old.Name+"-again", clustertest.Spec{Path: troupeBin, Args: args})
	require.NoError(t, err)
	a := &agentProc{Name: old.Name, Host: old.Host, Proc: p, API: old.API}
	for i, c := range tc.clients {
		if c == old {
			tc.clients[i] = a
		}
	}
	return a
}

// TestClusterTemplateChangedWhileClientDown: a task renders a variable
// with change_mode restart; its client agent is SIGKILLed (the task lives
// on), the variable changes, and the agent starts again on its data dir:
// it re-renders the template on restore and restarts the task once, in
// the same allocation, which prints the new value.
func TestClusterTemplateChangedWhileClientDown(t *testing.T) {
	dataRoot := t.TempDir()
	tc := startAgentsTuned(t, dataRoot, 1, 1, restartTuning)
	c := nomadClient(t, tc.server())
	setVar := func(v string) {
		t.Helper()
		_, _, err := c.Variables().Update(&nomad.Variable{Path: "nomad/jobs/greet", Items: nomad.VariableItems{"v": v}}, nil)
		require.NoError(t, err)
	}
	setVar("hello")

	job := nomad.NewServiceJob("greet", "greet", "global", 50)
	job.Datacenters = []string{"dc1"}
	tg := nomad.NewTaskGroup("g", 1)
	task := nomad.NewTask("t", "exec").SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", `echo "start $(cat "$NOMAD_TASK_DIR/greet.txt")"; while true; do sleep 0.1; done`}).
		Require(&nomad.Resources{CPU: ptrTo(20), MemoryMB: ptrTo(32)})
	splay := time.Nanosecond
	task.Templates = []*nomad.Template{{EmbeddedTmpl: ptrTo(`v={{ with nomadVar "nomad/jobs/greet" }}{{ .v }}{{ end }}`),
		DestPath: ptrTo("local/greet.txt"), ChangeMode: ptrTo("restart"), Splay: &splay}}
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	_, _, err := c.Jobs().Register(job, nil)
	require.NoError(t, err)

	var allocID string
	stdout := func() string {
		a, _, err := c.Allocations().Info(allocID, nil)
		if err != nil {
			return err.Error()
		}
		r, err := c.AllocFS().Cat(a, "alloc/logs/t.stdout.0", nil)
		if err != nil {
			return err.Error()
		}
		defer r.Close()
		b, _ := io.ReadAll(io.LimitReader(r, 1<<16))
		return string(b)
	}
	tc.eventually(t, settleTimeout, "the task prints the variable", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations("greet", false, nil)
		if err != nil || len(allocs) != 1 || allocs[0].ClientStatus != "running" {
			return false, fmt.Sprintf("allocations %d, err %v", len(allocs), err)
		}
		allocID = allocs[0].ID
		out := stdout()
		return strings.Contains(out, "start v=hello\n"), out
	})

	client := tc.clients[0]
	client.Kill(t)
	setVar("bye")
	tc.restartClient(t, client, dataRoot)

	tc.eventually(t, settleTimeout, "the restored task prints the new value", func() (bool, string) {
		out := stdout()
		return strings.Contains(out, "start v=bye\n"), out
	})
	require.Equal(t, 1, strings.Count(stdout(), "start v=bye"), "restarted once: %s", stdout())
	allocs, _, err := c.Jobs().Allocations("greet", false, nil)
	require.NoError(t, err)
	require.Len(t, allocs, 1, "the same allocation, not a replacement")
	require.Equal(t, allocID, allocs[0].ID)
	// The log file is read from the client, the status from the server:
	// the restarted task's "running" reaches the server a moment later.
	tc.eventually(t, settleTimeout, "the server sees the restored allocation running", func() (bool, string) {
		full, _, err := c.Allocations().Info(allocID, nil)
		if err != nil {
			return false, err.Error()
		}
		var types []string
		if ts := full.TaskStates["t"]; ts != nil {
			for _, ev := range ts.Events {
				types = append(types, ev.Type)
			}
		}
		ok := full.ClientStatus == "running" && strings.Contains(strings.Join(types, ","), "Restart Signaled")
		return ok, fmt.Sprintf("client status %s, events %v (change_mode restart applied on restore)", full.ClientStatus, types)
	})
}
