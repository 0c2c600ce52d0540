package agent

import (
	"strconv"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/state"
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

// TestGCTrimsVersionsAfterLimitLowered: a job registered while the
// servers kept 6 versions keeps its 4 (in a raft snapshot); after a
// restart with job_tracked_versions 2, a collection (PUT /v1/system/gc)
// trims it to its 2 newest, which the versions endpoint then lists.
func TestGCTrimsVersionsAfterLimitLowered(t *testing.T) {
	dir := t.TempDir()
	first := testConfig(t, dir)
	first.SnapshotThreshold, first.SnapshotInterval = 1, 20*time.Millisecond
	a := startAgent(t, first)
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	for i := range 4 {
		j := loopJob("v")
		j.TaskGroups[0].Count = ptr(0)
		j.Meta = map[string]string{"rev": string(rune('a' + i))}
		_, _, err = c.Jobs().Register(j, nil)
		require.NoError(t, err)
	}
	versions := func(c *nomad.Client) []uint64 {
		vs, _, _, err := c.Jobs().Versions("v", false, nil)
		require.NoError(t, err)
		var out []uint64
		for _, v := range vs {
			out = append(out, *v.Version)
		}
		return out
	}
	require.Equal(t, []uint64{3, 2, 1, 0}, versions(c))
	last := a.Store().Snapshot().Index(state.TableJobs)
	require.Eventually(t, func() bool {
		n, _ := strconv.ParseUint(a.Raft().Stats()["last_snapshot_index"], 10, 64)
		return n >= last
	}, 10*time.Second, 10*time.Millisecond, "raft never snapshotted the registrations")
	require.NoError(t, a.Shutdown())

	cfg := testConfig(t, dir)
	cfg.JobVersions = 2
	b := startAgent(t, cfg)
	defer b.Shutdown()
	c, err = nomad.NewClient(&nomad.Config{Address: "http://" + b.HTTPAddr()})
	require.NoError(t, err)
	require.Len(t, versions(c), 4, "lowering the limit trims nothing by itself")
	require.NoError(t, c.System().GarbageCollect())
	require.Equal(t, []uint64{3, 2}, versions(c), "the collector trims to the newest 2")
	j, _, err := c.Jobs().Info("v", nil)
	require.NoError(t, err)
	require.Equal(t, uint64(3), *j.Version)
}
