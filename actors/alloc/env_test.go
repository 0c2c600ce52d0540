package alloc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
