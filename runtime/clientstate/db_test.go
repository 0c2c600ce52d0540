package clientstate

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func TestRoundTripSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "client.db")
	db, err := Open(path, nil)
	require.NoError(t, err)
	db.PutAlloc(&messages.Allocation{ID: "a1", ClientStatus: "running"})
	db.PutTaskState("a1", "web", &messages.TaskState{State: "running", Restarts: 2})
	require.NoError(t, db.PutTaskHandle("a1", "web", []byte(`{"Pid":42}`)))
	db.PutAlloc(&messages.Allocation{ID: "a2"})
	db.DeleteAlloc("a2")
	require.NoError(t, db.Close())

	db, err = Open(path, nil)
	require.NoError(t, err)
	defer db.Close()
	all, err := db.Allocs()
	require.NoError(t, err)
	require.Len(t, all, 1)
	require.Equal(t, "running", all[0].Alloc.ClientStatus)
	require.Equal(t, uint64(2), all[0].TaskStates["web"].Restarts)
	require.JSONEq(t, `{"Pid":42}`, string(all[0].Handles["web"]))
	h, err := db.TaskHandle("a1", "web")
	require.NoError(t, err)
	require.JSONEq(t, `{"Pid":42}`, string(h))
	h, err = db.TaskHandle("nope", "web")
	require.NoError(t, err)
	require.Nil(t, h)
}

func TestWritesKeepOrder(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "client.db"), nil)
	require.NoError(t, err)
	defer db.Close()
	for i := 0; i < 500; i++ {
		db.PutAlloc(&messages.Allocation{ID: "a", ModifyIndex: uint64(i)})
	}
	db.Flush()
	sa, err := db.Alloc("a")
	require.NoError(t, err)
	require.Equal(t, uint64(499), sa.Alloc.ModifyIndex)
}

func TestVolumeMountsSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "client.db")
	db, err := Open(path, nil)
	require.NoError(t, err)
	db.PutAlloc(&messages.Allocation{ID: "a1", ClientStatus: "complete"})
	rec := &VolumeMount{Name: "data", VolumeID: "vol[0]", PluginID: "plug", ExternalID: "ext", TargetPath: "/t",
		StagingPath: "/s", ClaimSent: true, Staged: true, Published: true, Binds: []string{"/task/data"}, RetryStart: 42,
		State: &messages.AllocVolumeState{VolumeID: "vol[0]", State: "unpublishing", Attempts: 3,
			Events: []*messages.TaskEvent{{Type: "Unpublish Failed", Message: "busy"}}}}
	require.NoError(t, db.PutVolumeMount("a1", rec))
	rec.Binds[0] = "/changed" // the stored copy is not shared
	require.Error(t, db.PutVolumeMount("a1", &VolumeMount{}), "a record needs a name")
	require.NoError(t, db.Close())
	require.ErrorIs(t, db.PutVolumeMount("a1", rec), ErrClosed)

	db, err = Open(path, nil)
	require.NoError(t, err)
	defer db.Close()
	sa, err := db.Alloc("a1")
	require.NoError(t, err)
	got := sa.Volumes["data"]
	require.NotNil(t, got)
	require.Equal(t, []string{"/task/data"}, got.Binds)
	require.True(t, got.Staged && got.Published && got.ClaimSent)
	require.Equal(t, int64(42), got.RetryStart)
	require.Equal(t, int32(3), got.State.GetAttempts())
	require.Equal(t, "busy", got.State.GetEvents()[0].GetMessage())
	c := got.Clone()
	c.Binds[0], c.State.State = "x", "failed"
	require.Equal(t, "/task/data", got.Binds[0])
	require.Equal(t, "unpublishing", got.State.GetState())

	none, err := db.VolumeMounts("unknown")
	require.NoError(t, err)
	require.Empty(t, none)
}
