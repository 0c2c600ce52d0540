//go:build linux

package exec

import (
	"context"
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// roundTrip persists a handle as the client's state file would.
func roundTrip(t *testing.T, h *driver.TaskHandle) *driver.TaskHandle {
	t.Helper()
	data, err := json.Marshal(h)
	require.NoError(t, err)
	var out driver.TaskHandle
	require.NoError(t, json.Unmarshal(data, &out))
	return &out
}

func TestRecoverRunningTask(t *testing.T) {
	a := newDriver(t)
	cfg, h := start(t, a, `echo start >> starts; exec sleep 1000`)
	waitFile(t, filepath.Join(cfg.TaskDir, "starts"))
	a.Shutdown() // the agent goes away; the task must not

	b := newDriver(t)
	ctx := context.Background()
	require.NoError(t, b.RecoverTask(ctx, roundTrip(t, h)))
	require.NoError(t, b.RecoverTask(ctx, roundTrip(t, h)), "recovering twice is a no-op")
	require.True(t, alive(h.Pid, h.StartTicks), "same task process")
	data, err := os.ReadFile(filepath.Join(cfg.TaskDir, "starts"))
	require.NoError(t, err)
	require.Equal(t, "start\n", string(data), "the task must not start twice")

	ch, err := b.WaitTask(ctx, cfg.ID)
	require.NoError(t, err)
	require.NoError(t, b.StopTask(ctx, cfg.ID, 10*time.Second, "SIGTERM"))
	r := recv(t, ch)
	require.NoError(t, r.Err)
	require.Equal(t, int(syscall.SIGTERM), r.Signal)
	require.False(t, alive(h.Pid, h.StartTicks))
}

func TestRecoverTaskThatExitedUnwatched(t *testing.T) {
	a := newDriver(t)
	cfg, h := start(t, a, `while [ ! -f go ]; do sleep 0.02; done; exit 7`)
	a.Shutdown()
	require.NoError(t, os.WriteFile(filepath.Join(cfg.TaskDir, "go"), nil, 0o644))
	waitFile(t, filepath.Join(cfg.TaskDir, stateDirName, exitFileName))

	b := newDriver(t)
	require.NoError(t, b.RecoverTask(context.Background(), roundTrip(t, h)))
	r := result(t, b, cfg.ID)
	require.NoError(t, r.Err)
	require.Equal(t, 7, r.ExitCode)
}

func TestRecoverGoneTask(t *testing.T) {
	tests := []struct {
		name   string
		script string
		change func(t *testing.T, h *driver.TaskHandle, st *handleState)
		want   error
	}{
		{
			name:   "pids reused",
			script: "sleep 1000",
			change: func(_ *testing.T, h *driver.TaskHandle, st *handleState) {
				h.StartTicks++
				st.ExecutorStartTicks++
			},
			want: driver.ErrTaskNotFound,
		},
		{
			name:   "not alive and no exit status",
			script: "exit 0",
			change: func(t *testing.T, h *driver.TaskHandle, st *handleState) {
				waitFile(t, filepath.Join(st.StateDir, exitFileName))
				dead := osexec.Command("/bin/true")
				require.NoError(t, dead.Run())
				h.Pid, st.ExecutorPid = dead.Process.Pid, dead.Process.Pid
				st.StateDir = t.TempDir() // wiped, as by a reboot
			},
			want: driver.ErrTaskNotFound,
		},
		{
			name:   "other driver",
			script: "exit 0",
			change: func(_ *testing.T, h *driver.TaskHandle, _ *handleState) { h.Driver = "docker" },
			want:   driver.ErrInvalidHandle,
		},
		{
			name:   "garbage state",
			script: "exit 0",
			change: func(_ *testing.T, h *driver.TaskHandle, st *handleState) { st.StateDir = "" },
			want:   driver.ErrInvalidHandle,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newDriver(t)
			_, h := start(t, a, tt.script)
			a.Shutdown()
			h = roundTrip(t, h)
			var st handleState
			require.NoError(t, json.Unmarshal(h.State, &st))
			tt.change(t, h, &st)
			var err error
			h.State, err = json.Marshal(st)
			require.NoError(t, err)

			b := newDriver(t)
			require.ErrorIs(t, b.RecoverTask(context.Background(), h), tt.want)
			_, err = b.WaitTask(context.Background(), h.TaskID)
			require.ErrorIs(t, err, driver.ErrTaskNotFound)
		})
	}
}

// TestTaskSurvivesAgentKill kills a real agent process's whole process
// group with SIGKILL, then signals the orphaned executor: the task and its
// executor must live on, and a new driver must recover the task and learn
// its exit status.
func TestTaskSurvivesAgentKill(t *testing.T) {
	dir := t.TempDir()
	handlePath := filepath.Join(t.TempDir(), "handle.json")
	exe, err := os.Executable()
	require.NoError(t, err)
	agent := osexec.Command(exe, dir, `echo start >> starts; exec sleep 1000`, handlePath)
	agent.Env = []string{envAgent + "=1"}
	agent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, agent.Start())
	t.Cleanup(func() { _ = syscall.Kill(-agent.Process.Pid, syscall.SIGKILL); _ = agent.Wait() })

	var h driver.TaskHandle
	require.NoError(t, json.Unmarshal([]byte(waitFile(t, handlePath)), &h))
	t.Cleanup(func() { killTask(t, &h) })
	require.NoError(t, syscall.Kill(-agent.Process.Pid, syscall.SIGKILL))
	require.Error(t, agent.Wait(), "the agent died")

	var st handleState
	require.NoError(t, json.Unmarshal(h.State, &st))
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		require.NoError(t, syscall.Kill(st.ExecutorPid, sig), "executor must be alive for %s", sig)
	}
	require.True(t, alive(h.Pid, h.StartTicks), "the task outlived the agent")

	b := newDriver(t)
	ctx := context.Background()
	require.NoError(t, b.RecoverTask(ctx, &h))
	ch, err := b.WaitTask(ctx, h.TaskID)
	require.NoError(t, err)
	require.NoError(t, b.StopTask(ctx, h.TaskID, 10*time.Second, ""))
	r := recv(t, ch)
	require.NoError(t, r.Err, "the executor survived its signals and wrote the exit status")
	require.Equal(t, int(syscall.SIGTERM), r.Signal)
	starts, err := os.ReadFile(filepath.Join(dir, "starts"))
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(starts), "start"))
}
