package agent

import (
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestSystemGCThroughNomadsClient: a finished batch job, its allocation
// and its evaluation are purged by a forced garbage collection (PUT
// /v1/system/gc, Nomad's System().GarbageCollect()), whatever their age;
// a running service job is left alone.
func TestSystemGCThroughNomadsClient(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	job := func(id, typ, script string) *nomad.Job {
		j := &nomad.Job{ID: ptr(id), Name: ptr(id), Type: ptr(typ), Datacenters: []string{"dc1"}}
		tg := nomad.NewTaskGroup("g", 1)
		tg.AddTask(nomad.NewTask("t", "exec").SetConfig("command", "/bin/sh").
			SetConfig("args", []string{"-c", script}).Require(&nomad.Resources{CPU: ptr(20), MemoryMB: ptr(16)}))
		j.AddTaskGroup(tg)
		return j
	}
	_, _, err = c.Jobs().Register(job("once", "batch", "true"), nil)
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(job("web", "service", "sleep 1000"), nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		j, _, err := c.Jobs().Info("once", nil)
		return err == nil && j.Status != nil && *j.Status == "dead"
	}, 30*time.Second, 20*time.Millisecond, "the batch job finishes")
	allocs, _, err := c.Jobs().Allocations("once", true, nil)
	require.NoError(t, err)
	require.Len(t, allocs, 1)
	evals, _, err := c.Jobs().Evaluations("once", nil)
	require.NoError(t, err)
	require.NotEmpty(t, evals)

	require.NoError(t, c.System().GarbageCollect())

	_, _, err = c.Jobs().Info("once", nil)
	require.ErrorContains(t, err, "404", "the finished batch job is purged")
	_, _, err = c.Allocations().Info(allocs[0].ID, nil)
	require.ErrorContains(t, err, "404", "with its allocation")
	_, _, err = c.Evaluations().Info(evals[0].ID, nil)
	require.ErrorContains(t, err, "404", "and its evaluation")
	web, _, err := c.Jobs().Info("web", nil)
	require.NoError(t, err, "the running service job stays")
	require.Equal(t, "web", *web.ID)
}
