package alloc

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/safepath/safepathtest"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// hostDirs is a data dir's alloc root in a temp dir, beside a sentinel dir
// with a file in it, and the temp dir (the data dir's parent).
func hostDirs(t *testing.T) (top, root, sentinel string) {
	t.Helper()
	top = t.TempDir()
	root, sentinel = filepath.Join(top, "data", "alloc"), filepath.Join(top, "sentinel")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.MkdirAll(sentinel, 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(sentinel, "keep"), []byte("keep"), 0o640))
	return top, root, sentinel
}

const escapedTask = "../../../../tmp/x-escaped-task"

// TestUnsafeNamesFailAllocAndMakeNothing: an allocation whose ID, group,
// task or volume name is not one path element (as a job stored before
// validation, or a replayed allocation, may have) fails with a description
// naming it, starts no task and creates nothing on the host.
func TestUnsafeNamesFailAllocAndMakeNothing(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	names := []string{escapedTask, "..", ".", "a/b", "a\x00b", huge, "../../../sentinel/planted", ""}
	fields := []struct {
		kind string
		set  func(a *messages.Allocation, name string)
	}{
		{"task", func(a *messages.Allocation, n string) { a.Job.TaskGroups[0].Tasks[0].Name = n }},
		{"allocation ID", func(a *messages.Allocation, n string) { a.ID = n }},
		{"task group", func(a *messages.Allocation, n string) { a.TaskGroup, a.Job.TaskGroups[0].Name = n, n }},
		{"volume", func(a *messages.Allocation, n string) {
			a.Job.TaskGroups[0].Volumes = map[string]*messages.VolumeRequest{n: {Type: "host", Source: "v"}}
		}},
	}
	for _, f := range fields {
		for _, name := range names {
			if name == "" && f.kind == "task group" {
				continue // no group named "": the allocation fails as "task group not found"
			}
			t.Run(f.kind+"/"+safepath.Quote(name), func(t *testing.T) {
				top, root, _ := hostDirs(t)
				h := newHarnessAt(t, filepath.Join(t.TempDir(), "client.db"), root, driver.NewFake(),
					actors.NewFakeClock(time.Unix(1_700_000_000, 0)))
				a := testAlloc("service", map[string]any{}, nil)
				f.set(a, name)
				before := safepathtest.Tree(t, top)

				h.spawn(a)
				failed := h.waitFor("failed", status(statusFailed))

				require.Contains(t, failed.ClientDescription, "unsafe name: "+f.kind+" "+safepath.Quote(name))
				require.Zero(t, h.fake.Calls(driver.MethodStartTask))
				require.Equal(t, before, safepathtest.Tree(t, top), "nothing made beside or in the data dir")
				_, err := os.Lstat("/tmp/x-escaped-task")
				require.ErrorIs(t, err, fs.ErrNotExist)
				if f.kind == "task" && len(name) <= safepath.MaxName {
					st := failed.TaskStates[name]
					require.NotNil(t, st, "the task says why it did not start")
					require.True(t, st.Failed)
					require.Equal(t, eventSetupFailure, st.Events[len(st.Events)-1].Type)
				}
			})
		}
	}
}

// TestPlantedSymlinksFailSetup: a symlink planted in the allocation dir
// before its tasks start (the task dir, the shared alloc dir, the alloc
// dir itself pointing out) fails the setup; the link's target is left as
// it was and no task starts.
func TestPlantedSymlinksFailSetup(t *testing.T) {
	tests := []struct {
		name string
		link string // relative to the alloc root
	}{
		{"task dir", "a1b2c3d4-0000-0000-0000-000000000001/t"},
		{"shared alloc dir", "a1b2c3d4-0000-0000-0000-000000000001/alloc"},
		{"alloc dir", "a1b2c3d4-0000-0000-0000-000000000001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, root, sentinel := hostDirs(t)
			link := filepath.Join(root, tt.link)
			require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
			require.NoError(t, os.Symlink(sentinel, link))
			h := newHarnessAt(t, filepath.Join(t.TempDir(), "client.db"), root, driver.NewFake(),
				actors.NewFakeClock(time.Unix(1_700_000_000, 0)))
			before := safepathtest.Tree(t, sentinel)

			h.spawn(testAlloc("service", map[string]any{}, nil))
			failed := h.waitFor("failed", status(statusFailed))

			require.Contains(t, failed.ClientDescription, "setup failed: alloc_dir: alloc dir")
			require.Zero(t, h.fake.Calls(driver.MethodStartTask))
			require.Equal(t, before, safepathtest.Tree(t, sentinel), "the link's target is untouched")
		})
	}
}

// TestMountPointRefusesSymlinks: the bind mount of a csi volume into a
// task dir is refused on a planted symlink (mount(2) would follow it), and
// its parents are made only inside the allocation dir.
func TestMountPointRefusesSymlinks(t *testing.T) {
	tests := []struct {
		name  string
		plant func(allocDir, sentinel, src string) error
		dst   string // relative to the alloc dir
		ok    bool
	}{
		{"fresh", func(string, string, string) error { return nil }, "t/data", true},
		{"deep fresh", func(string, string, string) error { return nil }, "t/srv/data", true},
		{"dst links out", func(d, s, _ string) error { return os.Symlink(s, filepath.Join(d, "t/data")) }, "t/data", false},
		{"parent links out", func(d, s, _ string) error { return os.Symlink(s, filepath.Join(d, "t/srv")) }, "t/srv/data", false},
		{"stand-in link to src", func(d, _, src string) error { return os.Symlink(src, filepath.Join(d, "t/data")) }, "t/data", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, root, sentinel := hostDirs(t)
			allocDir, src := filepath.Join(root, "a1"), filepath.Join(root, "published")
			require.NoError(t, os.MkdirAll(filepath.Join(allocDir, "t"), 0o755))
			require.NoError(t, tt.plant(allocDir, sentinel, src))
			before := safepathtest.Tree(t, sentinel)

			err := mountPoint(allocDir, filepath.Join(allocDir, tt.dst), src)

			require.Equal(t, before, safepathtest.Tree(t, sentinel))
			if !tt.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.DirExists(t, filepath.Dir(filepath.Join(allocDir, tt.dst)))
		})
	}
}

// TestAllocDirHookSocketStandInLinks: a symlink planted where a CSI
// plugin's socket stand-in goes (under the shared temp dir) fails Prerun,
// and Postrun removes the link, never its target.
func TestAllocDirHookSocketStandInLinks(t *testing.T) {
	_, root, sentinel := hostDirs(t)
	root = filepath.Join(root, strings.Repeat("d", 90))
	a := &messages.Allocation{ID: "a1", TaskGroup: "g", Job: &messages.Job{TaskGroups: []*messages.TaskGroup{{Name: "g",
		Tasks: []*messages.Task{{Name: "plugin", CSIPluginConfig: &messages.CSIPluginConfig{ID: "p", MountDir: "/csi"}}}}}}}
	standIn := filepath.Dir(PluginSocketPath(root, "a1", "plugin", "/csi"))
	require.False(t, safepath.Within(root, standIn), "a stand-in outside the alloc dir")
	require.NoError(t, os.Symlink(sentinel, standIn))
	t.Cleanup(func() { _ = os.Remove(standIn) })
	before := safepathtest.Tree(t, sentinel)
	h := &AllocDirHook{Root: root}

	require.ErrorIs(t, h.Prerun(t.Context(), a), safepath.ErrSymlink)
	require.NoError(t, h.Postrun(t.Context(), a))

	_, err := os.Lstat(standIn)
	require.ErrorIs(t, err, fs.ErrNotExist, "the link is gone")
	require.Equal(t, before, safepathtest.Tree(t, sentinel), "its target is untouched")
}

func TestPluginSocketPathStaysInTaskDir(t *testing.T) {
	for _, dir := range []string{"/csi", "csi", "../../../../etc", "/../.."} {
		t.Run(dir, func(t *testing.T) {
			p := PluginSocketPath("/d/alloc", "a1", "plugin", dir)
			require.True(t, safepath.Within("/d/alloc/a1/plugin", p), p)
		})
	}
}

func TestPathSafe(t *testing.T) {
	tests := map[string]string{
		"vol": "vol", "a/b": "a_b", "a\x00": "a_", "": "_", ".": "_.", "..": "_..", "../x": ".._x",
	}
	for in, want := range tests {
		t.Run(safepath.Quote(in), func(t *testing.T) {
			require.Equal(t, want, pathSafe(in))
			require.NoError(t, safepath.CheckName("id", pathSafe(in)))
		})
	}
}
