package agent

import (
	"path/filepath"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestJobScaleThroughNomadsClient scales a job with Nomad's own client:
// up to 3 (the running allocation kept, its task started once), the scale
// status counts, then down to 1; bad requests change nothing.
func TestJobScaleThroughNomadsClient(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(startsJob("scaled", 1), nil)
	require.NoError(t, err)
	first := waitAllocStatus(t, c, "scaled", "running")
	running := func() int {
		n := 0
		for _, al := range a.Store().Snapshot().AllocsByJob("default", "scaled") {
			if al.GetClientStatus() == "running" && al.GetDesiredStatus() == "run" {
				n++
			}
		}
		return n
	}

	resp, _, err := c.Jobs().Scale("scaled", "g", ptr(3), "more", false, nil, nil)
	require.NoError(t, err)
	require.NotEmpty(t, resp.EvalID)
	require.Eventually(t, func() bool { return running() == 3 }, 30*time.Second, 20*time.Millisecond)
	require.Equal(t, "run", a.Store().Snapshot().AllocByID(first.ID).GetDesiredStatus(), "the first allocation is kept")
	requireNotRestarted(t, a, first.ID, filepath.Join(a.AllocDir(), first.ID, "t", "local", "starts"))

	st, _, err := c.Jobs().ScaleStatus("scaled", nil)
	require.NoError(t, err)
	require.Equal(t, 3, st.TaskGroups["g"].Desired)
	require.Equal(t, 3, st.TaskGroups["g"].Placed)
	require.Equal(t, 3, st.TaskGroups["g"].Running)

	version := a.Store().Snapshot().JobByID("default", "scaled").GetVersion()
	for _, bad := range []struct {
		group string
		count *int
		want  string
	}{
		{"nope", ptr(2), `has no group "nope"`},
		{"g", ptr(-1), "out of range"},
		{"g", nil, "Count is required"},
	} {
		_, _, err = c.Jobs().Scale("scaled", bad.group, bad.count, "", false, nil, nil)
		require.ErrorContains(t, err, bad.want)
	}
	_, _, err = c.Jobs().Scale("no-such-job", "g", ptr(2), "", false, nil, nil)
	require.ErrorContains(t, err, "404")
	stale := int64(2)
	_, _, err = c.Jobs().ScaleWithRequest("scaled", &nomad.ScalingRequest{Count: &stale,
		Target: map[string]string{"Group": "g"}, JobModifyIndex: 1}, nil)
	require.ErrorContains(t, err, "409", "the job changed since index 1")
	require.ErrorContains(t, err, nomad.RegisterEnforceIndexErrPrefix)
	require.Equal(t, version, a.Store().Snapshot().JobByID("default", "scaled").GetVersion(), "bad requests change nothing")

	_, _, err = c.Jobs().Scale("scaled", "", ptr(1), "", false, nil, nil) // the only group
	require.NoError(t, err)
	require.Eventually(t, func() bool { return running() == 1 }, 30*time.Second, 20*time.Millisecond)
	require.EqualValues(t, 1, a.Store().Snapshot().JobByID("default", "scaled").GetTaskGroups()[0].GetCount())

	// Scaled to 0, Nomad's client reads Count 0 (a pointer: nil would be
	// "unset", which Nomad's own tools take for the default 1).
	_, _, err = c.Jobs().Scale("scaled", "g", ptr(0), "", false, nil, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return running() == 0 }, 30*time.Second, 20*time.Millisecond)
	job, _, err := c.Jobs().Info("scaled", nil)
	require.NoError(t, err)
	require.NotNil(t, job.TaskGroups[0].Count)
	require.Zero(t, *job.TaskGroups[0].Count)
	require.NotNil(t, job.Stop)
	require.False(t, *job.Stop)
}
