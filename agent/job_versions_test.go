package agent

import (
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestJobVersionsAndRevertThroughNomadsClient: three versions of a job
// are listed newest first with the diffs between them; reverting to
// version 0 registers its spec as version 3 and the allocation runs it;
// a wrong prior version, an unknown version or the current one change
// nothing.
func TestJobVersionsAndRevertThroughNomadsClient(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	withArg := func(arg string) *nomad.Job {
		j := nomad.NewServiceJob("hist", "hist", "global", 50)
		tg := nomad.NewTaskGroup("g", 1)
		tg.AddTask(nomad.NewTask("t", "exec").SetConfig("command", "/bin/sh").
			SetConfig("args", []string{"-c", arg}).Require(&nomad.Resources{CPU: ptr(20), MemoryMB: ptr(16)}))
		j.AddTaskGroup(tg)
		return j
	}
	for _, arg := range []string{"sleep 1000 # v0", "sleep 1000 # v1", "sleep 1000 # v2"} {
		_, _, err = c.Jobs().Register(withArg(arg), nil)
		require.NoError(t, err)
	}
	versions, diffs, _, err := c.Jobs().Versions("hist", true, nil)
	require.NoError(t, err)
	require.Len(t, versions, 3)
	for i, v := range versions {
		require.EqualValues(t, 2-i, versionOf(t, v), "newest first")
	}
	require.Len(t, diffs, 2)
	require.Equal(t, "Edited", diffs[0].Type)
	require.Len(t, diffs[0].TaskGroups, 1)
	require.Len(t, diffs[0].TaskGroups[0].Tasks, 1)
	require.Equal(t, "Edited", diffs[0].TaskGroups[0].Tasks[0].Type, "v1 -> v2 changed the task's args")

	current := func() *nomad.Job { j, _, err := c.Jobs().Info("hist", nil); require.NoError(t, err); return j }
	for _, bad := range []struct {
		version uint64
		prior   *uint64
		want    string
	}{
		{0, ptr(uint64(1)), "not the enforced prior version 1"},
		{7, nil, "has no stored version 7"},
		{2, nil, "already at version 2"},
	} {
		_, _, err = c.Jobs().Revert("hist", bad.version, bad.prior, nil, "", "")
		require.ErrorContains(t, err, bad.want)
	}
	require.EqualValues(t, 2, versionOf(t, current()), "refused reverts change nothing")

	_, _, err = c.Jobs().Revert("hist", 0, ptr(uint64(2)), nil, "", "")
	require.NoError(t, err)
	reverted := current()
	require.EqualValues(t, 3, versionOf(t, reverted))
	require.Equal(t, []any{"-c", "sleep 1000 # v0"}, reverted.TaskGroups[0].Tasks[0].Config["args"])
	require.Eventually(t, func() bool {
		for _, al := range a.Store().Snapshot().AllocsByJob("default", "hist") {
			if al.GetJobVersion() == 3 && al.GetClientStatus() == "running" && al.GetDesiredStatus() == "run" {
				return true
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond, "an allocation of the reverted version should run")
}

// versionOf is a job's version; the server writes 0 too (Nomad's client
// reads it into a pointer, nil would mean "no version").
func versionOf(t *testing.T, j *nomad.Job) uint64 {
	t.Helper()
	require.NotNil(t, j.Version, "job %s has no Version", *j.ID)
	return *j.Version
}
