package exec

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIsolatedIPCNamespaceAndNoNewPrivs: an isolated task has its own ipc
// namespace (not the agent's) and runs with no_new_privs set, so a setuid
// binary cannot raise it.
func TestIsolatedIPCNamespaceAndNoNewPrivs(t *testing.T) {
	requireRoot(t, "isolation")
	hostIPC, err := os.Readlink("/proc/self/ns/ipc")
	require.NoError(t, err)
	hostPID, err := os.Readlink("/proc/self/ns/pid")
	require.NoError(t, err)
	cfg, _ := isolated(t, `echo "ipc=$(readlink /proc/self/ns/ipc)"; echo "pid=$(readlink /proc/self/ns/pid)"; grep NoNewPrivs /proc/self/status`)
	out, _ := runIsolated(t, newDriver(t), cfg)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, out)
	require.True(t, strings.HasPrefix(lines[0], "ipc=ipc:["), out)
	require.NotEqual(t, "ipc="+hostIPC, lines[0], "the task's ipc namespace is its own")
	require.True(t, strings.HasPrefix(lines[1], "pid=pid:["), out)
	require.NotEqual(t, "pid="+hostPID, lines[1], "the task's pid namespace is its own")
	require.Equal(t, "NoNewPrivs:\t1", lines[2])
}
