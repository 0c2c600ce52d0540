package alloc

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/golang/snappy"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func dispatchedAlloc(file string, payload []byte) *messages.Allocation {
	return &messages.Allocation{ID: "a1", TaskGroup: "g", Job: &messages.Job{ID: "p/dispatch-1-aaaaaaaa", Dispatched: true,
		Payload: snappy.Encode(nil, payload), Meta: map[string]string{"scene": "s1", "team": "job"},
		TaskGroups: []*messages.TaskGroup{{Name: "g", Meta: map[string]string{"team": "group"}, Tasks: []*messages.Task{
			{Name: "t", DispatchPayload: &messages.DispatchPayloadConfig{File: file}, Meta: map[string]string{"Level": "task"}},
			{Name: "other"}}}}}}
}

// TestDispatchPayloadHook: the payload lands in <task>/local/<file> of the
// task that asks for it, in the directories the file names; the other
// task gets none; a file that climbs out of local/ is refused and written
// nowhere.
func TestDispatchPayloadHook(t *testing.T) {
	root := t.TempDir()
	a := dispatchedAlloc("in/scene.json", []byte(`{"frames":3}`))
	require.NoError(t, (&AllocDirHook{Root: root}).Prerun(t.Context(), a))
	require.NoError(t, (&dispatchPayloadHook{root: root}).Prerun(t.Context(), a))
	path := filepath.Join(root, "a1", "t", "local", "in", "scene.json")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, `{"frames":3}`, string(got))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(payloadMode), fi.Mode().Perm())
	entries, err := os.ReadDir(filepath.Join(root, "a1", "other", "local"))
	require.NoError(t, err)
	require.Empty(t, entries)

	bad := dispatchedAlloc("../../escape", []byte("x"))
	bad.ID = "a2"
	require.NoError(t, (&AllocDirHook{Root: root}).Prerun(t.Context(), bad))
	require.Error(t, (&dispatchPayloadHook{root: root}).Prerun(t.Context(), bad))
	require.NoFileExists(t, filepath.Join(root, "escape"))
	require.NoFileExists(t, filepath.Join(root, "a2", "escape"))

	// A symlink planted at the file's directory is not followed out.
	link := dispatchedAlloc("sub/x", []byte("x"))
	link.ID = "a3"
	require.NoError(t, (&AllocDirHook{Root: root}).Prerun(t.Context(), link))
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "a3", "t", "local", "sub")))
	require.Error(t, (&dispatchPayloadHook{root: root}).Prerun(t.Context(), link))
	require.NoFileExists(t, filepath.Join(outside, "x"))

	// A payload that is not snappy data fails the allocation.
	raw := dispatchedAlloc("raw", nil)
	raw.ID, raw.Job.Payload = "a4", []byte("not snappy")
	require.NoError(t, (&AllocDirHook{Root: root}).Prerun(t.Context(), raw))
	require.ErrorIs(t, (&dispatchPayloadHook{root: root}).Prerun(t.Context(), raw), errPayloadCorrupt)
}

func TestMetaVars(t *testing.T) {
	a := dispatchedAlloc("f", nil)
	env := taskEnv(t.TempDir(), nil, a, a.Job.TaskGroups[0].Tasks[0], nil)
	require.Equal(t, "s1", env["NOMAD_META_scene"])
	require.Equal(t, "s1", env["NOMAD_META_SCENE"])
	require.Equal(t, "group", env["NOMAD_META_team"], "the group's meta over the job's")
	require.Equal(t, "task", env["NOMAD_META_Level"])
	require.Equal(t, "task", env["NOMAD_META_LEVEL"])
}
