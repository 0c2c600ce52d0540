package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/messages"
)

// TestSnapshotThenRestart makes raft snapshot after a few entries, then
// restarts the agent: the state comes back from the snapshot and the log
// after it.
func TestSnapshotThenRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Client = false
	cfg.SnapshotThreshold, cfg.SnapshotInterval = 4, 50*time.Millisecond
	a, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, a.Start())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, a.WaitLeader(ctx))
	for i := 0; i < 12; i++ {
		job, err := jobspec.Parse("j.hcl", []byte(fmt.Sprintf(`job "j%d" {
  group "g" {
    task "t" {
      driver = "exec"
      config {
        command = "/bin/true"
      }
    }
  }
}`, i)))
		require.NoError(t, err)
		jobspec.Canonicalize(job)
		_, _, err = a.Apply(ctx, &messages.Command{Cmd: &messages.Command_RegisterJob{RegisterJob: &messages.RegisterJob{Job: job}}})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		n, _ := strconv.Atoi(a.Raft().Stats()["last_snapshot_index"])
		return n > 0
	}, 10*time.Second, 20*time.Millisecond, "raft never snapshotted")
	snaps, _ := filepath.Glob(filepath.Join(dir, "server", "raft", "snapshots", "*"))
	require.NotEmpty(t, snaps)
	crash(t, a)

	b, err := New(testConfig(t, dir))
	require.NoError(t, err)
	b.cfg.Client = false
	require.NoError(t, b.Start())
	defer b.Shutdown()
	require.NoError(t, b.WaitLeader(ctx))
	require.Eventually(t, func() bool { return len(b.Store().Snapshot().Jobs()) == 12 }, 10*time.Second, 10*time.Millisecond)
	require.NotNil(t, b.Store().Snapshot().JobByID("default", "j11"))
}
