package exec

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCgroupReservedCores: the cores the scheduler reserved are the
// task's cpuset, exactly, and a task that picks its core locally (no
// reservation sent) gets another one.
func TestCgroupReservedCores(t *testing.T) {
	needCgroupsV1(t)
	d := newDriver(t)
	online := parseCPUList(strings.TrimSpace(readOnline(t)))
	last := online[len(online)-1]
	cfg := shellConfig(t.TempDir(), "alloc/reserved", "exec sleep 1000")
	cfg.Cores, cfg.ReservedCores = 1, []int{last}
	st := stateOf(t, startCfg(t, d, cfg))
	require.Equal(t, strconv.Itoa(last), v1File(t, "cpuset", st.Cgroup, "cpuset.cpus"), "the reserved core")
	require.Equal(t, strconv.Itoa(last), st.Cpuset)

	if len(online) > 1 {
		picked := shellConfig(t.TempDir(), "alloc/picked", "exec sleep 1000")
		picked.Cores = 1
		pst := stateOf(t, startCfg(t, d, picked))
		require.NotEqual(t, strconv.Itoa(last), pst.Cpuset, "the local pick passes over the reserved core")
		require.NoError(t, d.DestroyTask(context.Background(), picked.ID, true))
	}
}
