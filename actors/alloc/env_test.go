package alloc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func TestPluginSocketPath(t *testing.T) {
	short := PluginSocketPath("/var/lib/troupe/alloc", "a1", "plugin", "/csi")
	require.Equal(t, "/var/lib/troupe/alloc/a1/plugin/csi/csi.sock", short)

	deep := "/" + strings.Repeat("d", 90)
	long := PluginSocketPath(deep, "a1", "plugin", "")
	require.LessOrEqual(t, len(long), maxSocketPath)
	require.True(t, strings.HasPrefix(long, filepath.Join(os.TempDir(), "troupe-csi-")))
	require.Equal(t, long, PluginSocketPath(deep, "a1", "plugin", "/csi"), "the same path after a restart")
	require.NotEqual(t, long, PluginSocketPath(deep, "a2", "plugin", "/csi"))
}

// TestAllocDirHookRemovesSocketStandIns: the short socket directory that
// stands in for a deep plugin mount dir is made by Prerun and removed by
// Postrun; the alloc dir stays.
func TestAllocDirHookRemovesSocketStandIns(t *testing.T) {
	root := filepath.Join(t.TempDir(), strings.Repeat("d", 90))
	a := &messages.Allocation{ID: "a1", TaskGroup: "g", Job: &messages.Job{TaskGroups: []*messages.TaskGroup{{Name: "g",
		Tasks: []*messages.Task{{Name: "plugin", CSIPluginConfig: &messages.CSIPluginConfig{ID: "p", MountDir: "/csi"}}}}}}}
	h := &AllocDirHook{Root: root}
	require.NoError(t, h.Prerun(t.Context(), a))
	standIn := filepath.Dir(PluginSocketPath(root, "a1", "plugin", "/csi"))
	require.DirExists(t, standIn)
	require.NoError(t, h.Postrun(t.Context(), a))
	require.NoDirExists(t, standIn)
	require.DirExists(t, filepath.Join(root, "a1", "plugin"), "the alloc dir keeps the logs")
}
