package e2e

import (
	"fmt"
	"io"
	"strings"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// renderJob is a parameterized batch job whose task prints its payload
// (dispatch_payload: local/in/scene.txt) and its meta.
func renderJob() *nomad.Job {
	job := nomad.NewBatchJob("render", "render", "global", 50)
	job.Datacenters = []string{"dc1"}
	job.ParameterizedJob = &nomad.ParameterizedJobConfig{Payload: "required", MetaRequired: []string{"scene"}}
	tg := nomad.NewTaskGroup("g", 1)
	tg.RestartPolicy = &nomad.RestartPolicy{Attempts: ptrTo(0), Mode: ptrTo("fail")}
	task := nomad.NewTask("t", "exec").SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", `echo "payload=$(cat "$NOMAD_TASK_DIR/in/scene.txt") scene=$NOMAD_META_scene"`}).
		Require(&nomad.Resources{CPU: ptrTo(20), MemoryMB: ptrTo(32)})
	task.DispatchPayload = &nomad.DispatchPayloadConfig{File: "in/scene.txt"}
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

// dispatchChildren are the dispatched children of parent, as a server
// lists them (?stale: any server answers).
func dispatchChildren(c *nomad.Client, parent string) ([]string, error) {
	jobs, _, err := c.Jobs().List(&nomad.QueryOptions{AllowStale: true})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, j := range jobs {
		if j.ParentID == parent {
			out = append(out, j.ID)
		}
	}
	return out, nil
}

// childOutput waits for the child's allocation to complete on the client
// and returns what its task printed, read through the servers.
func (tc *testCluster) childOutput(t *testing.T, c *nomad.Client, child string) string {
	t.Helper()
	var alloc *nomad.AllocationListStub
	tc.eventually(t, settleTimeout, child+" completes", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations(child, false, &nomad.QueryOptions{AllowStale: true})
		if err != nil || len(allocs) == 0 {
			return false, fmt.Sprintf("allocations %d, err %v", len(allocs), err)
		}
		alloc = allocs[0]
		return alloc.ClientStatus == "complete", "client status " + alloc.ClientStatus
	})
	var out string
	tc.eventually(t, settleTimeout, child+"'s output", func() (bool, string) {
		a, _, err := c.Allocations().Info(alloc.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		r, err := c.AllocFS().Cat(a, "alloc/logs/t.stdout.0", nil)
		if err != nil {
			return false, err.Error()
		}
		defer r.Close()
		b, err := io.ReadAll(io.LimitReader(r, 1<<16))
		out = string(b)
		return err == nil && strings.Contains(out, "scene="), fmt.Sprintf("stdout %q, err %v", out, err)
	})
	return out
}

// TestClusterDispatchAcrossLeaderKill: a parameterized job dispatched
// through a follower of 3 servers runs on the client with its payload and
// meta; the leader is killed; the same idempotency token, asked of a
// survivor, answers the same child and creates nothing, and a new token
// makes a second child that runs. A dispatch with bad meta is refused and
// creates nothing, before and after the kill.
func TestClusterDispatchAcrossLeaderKill(t *testing.T) {
	tc := startAgents(t, t.TempDir(), 3, 1)
	c := nomadClient(t, tc.follower(t))
	_, _, err := c.Jobs().Register(renderJob(), nil)
	require.NoError(t, err)

	first, _, err := c.Jobs().Dispatch("render", map[string]string{"scene": "s1"}, []byte("frames=3"), "",
		&nomad.WriteOptions{IdempotencyToken: "tok-1"})
	require.NoError(t, err)
	require.NotEmpty(t, first.EvalID)
	require.Contains(t, tc.childOutput(t, c, first.DispatchedJobID), "payload=frames=3 scene=s1")

	_, _, err = c.Jobs().Dispatch("render", map[string]string{"other": "x"}, []byte("p"), "", nil)
	require.ErrorContains(t, err, "400")
	require.ErrorContains(t, err, "unpermitted metadata keys: [other]")

	old := tc.leader(t)
	old.Kill(t)
	var survivor *agentProc
	tc.eventually(t, formTimeout, "a new leader after "+old.Name+" died", func() (bool, string) {
		for _, s := range tc.liveServers() {
			l, err := s.API.Status().Leader()
			if err != nil || l == "" || l == old.RaftAddr() {
				return false, fmt.Sprintf("%s names leader %q (%v)", s.Name, l, err)
			}
			survivor = s
		}
		return true, ""
	})
	c = nomadClient(t, survivor)

	var again *nomad.JobDispatchResponse
	tc.eventually(t, settleTimeout, "the same token answered by the new leader", func() (bool, string) {
		again, _, err = c.Jobs().Dispatch("render", map[string]string{"scene": "s2"}, []byte("other"), "",
			&nomad.WriteOptions{IdempotencyToken: "tok-1"})
		return err == nil, fmt.Sprint(err)
	})
	require.Equal(t, first.DispatchedJobID, again.DispatchedJobID, "the token names the child it made before the kill")
	require.Empty(t, again.EvalID, "an idempotent dispatch evaluates nothing")

	second, _, err := c.Jobs().Dispatch("render", map[string]string{"scene": "s3"}, []byte("frames=9"), "",
		&nomad.WriteOptions{IdempotencyToken: "tok-2"})
	require.NoError(t, err)
	require.NotEqual(t, first.DispatchedJobID, second.DispatchedJobID)
	require.Contains(t, tc.childOutput(t, c, second.DispatchedJobID), "payload=frames=9 scene=s3")

	_, _, err = c.Jobs().Dispatch("render", map[string]string{"scene": "s4"}, nil, "", nil)
	require.ErrorContains(t, err, "payload is not provided but required")

	children, err := dispatchChildren(c, "render")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{first.DispatchedJobID, second.DispatchedJobID}, children,
		"two tokens made two children; the refused dispatches made none")
}
