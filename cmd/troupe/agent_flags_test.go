package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAgentHostVolumeFlag: a malformed -host-volume, or one naming no
// directory, stops the agent before it starts, saying which.
func TestAgentHostVolumeFlag(t *testing.T) {
	var stderr bytes.Buffer
	require.Equal(t, 1, runAgent([]string{"-dev", "-host-volume", "data"}, &stderr))
	require.Contains(t, stderr.String(), `-host-volume "data": want name=/path or name=/path:ro`)

	stderr.Reset()
	gone := filepath.Join(t.TempDir(), "gone")
	require.Equal(t, 1, runAgent([]string{"-dev", "-host-volume", "data=" + gone + ":ro"}, &stderr))
	require.Contains(t, stderr.String(), `host volume "data": path "`+gone+`"`)
	require.Contains(t, stderr.String(), "no such file or directory")

	stderr.Reset()
	dir := t.TempDir()
	require.Equal(t, 1, runAgent([]string{"-dev", "-host-volume", "a=" + dir, "-host-volume", "a=" + dir}, &stderr))
	require.Contains(t, stderr.String(), `-host-volume "a" is given twice`)
}

// TestAgentCgroupParentFlag: a -cgroup-parent that is not a cgroup of its
// own (the root, a "..") stops the agent before it starts, saying which.
func TestAgentCgroupParentFlag(t *testing.T) {
	for _, bad := range []string{"/", "/a/../b"} {
		var stderr bytes.Buffer
		require.Equal(t, 1, runAgent([]string{"-dev", "-cgroup-parent", bad}, &stderr), bad)
		require.Contains(t, stderr.String(), "-cgroup-parent", bad)
		require.Contains(t, stderr.String(), "cgroups: invalid name", bad)
	}
}
