package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	osexec "os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// pidPollInterval is how often StartTask looks for the executor's pid file.
const pidPollInterval = 10 * time.Millisecond

// StartTask implements driver.Driver: it starts the executor, which starts
// the task, and returns once the task runs.
func (d *Driver) StartTask(ctx context.Context, cfg *driver.TaskConfig) (*driver.TaskHandle, error) {
	if d.cfg.Disabled {
		return nil, fmt.Errorf("%w: %s: the %s driver is disabled on this client", driver.ErrInvalidConfig, cfg.ID, d.Name())
	}
	spec, err := buildSpec(cfg)
	if err == nil && !d.cfg.Raw { // raw_exec never isolates
		err = d.isolation(cfg, spec)
	}
	if err != nil {
		return nil, err
	}
	if err := d.tasks.Reserve(cfg.ID); err != nil {
		return nil, err
	}
	defer d.tasks.Release(cfg.ID)
	cpuset := ""
	if spec.Cgroup, cpuset, err = d.createCgroup(cfg); err != nil {
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			d.dropCgroup(cfg.ID, spec.Cgroup)
		}
	}()
	if err := writeSpec(spec); err != nil {
		return nil, fmt.Errorf("exec: %s: %w", cfg.ID, err)
	}
	cmd, err := d.startExecutor(spec)
	if err != nil {
		return nil, fmt.Errorf("exec: %s: starting executor: %w", cfg.ID, err)
	}
	t := driver.NewTask(cfg.ID, handleState{ExecutorPid: cmd.Process.Pid, StateDir: spec.StateDir})
	if !d.watch(t, func(ctx context.Context) bool { return reap(ctx, cmd) }) {
		killStarted(cmd, spec.StateDir)
		return nil, driver.ErrShutdown
	}
	pf, err := d.awaitPid(ctx, t)
	if err != nil {
		killStarted(cmd, spec.StateDir)
		return nil, fmt.Errorf("exec: %s: %w", cfg.ID, err)
	}
	t.Data = handleState{ExecutorPid: pf.ExecutorPid, ExecutorStartTicks: pf.ExecutorStartTicks,
		StateDir: spec.StateDir, Pgid: pf.Pid, Cgroup: spec.Cgroup, Cpuset: cpuset}
	state, err := json.Marshal(t.Data)
	if err != nil {
		return nil, err
	}
	t.Handle = driver.TaskHandle{Driver: d.Name(), TaskID: cfg.ID, Pid: pf.Pid,
		StartTicks: pf.StartTicks, StartedAt: time.Now(), State: state}
	d.tasks.Add(t)
	started = true
	d.log.Info("task started", "task", cfg.ID, "pid", pf.Pid, "executor_pid", pf.ExecutorPid)
	h := t.Handle
	return &h, nil
}

// writeSpec makes a fresh state directory (dropping a previous run's pid
// and exit files) and writes the spec into it.
// Everything is made beneath the spec's root, never through a symlink
// that leads out of it; the task dir itself must be a directory.
func writeSpec(spec *executorSpec) error {
	if err := checkTaskDir(spec); err != nil {
		return err
	}
	root := spec.root()
	if err := safepath.RemoveAll(root, spec.StateDir); err != nil {
		return err
	}
	if err := safepath.MkdirAll(root, spec.StateDir, 0o700); err != nil {
		return err
	}
	return writeJSONAtomic(root, filepath.Join(spec.StateDir, specFile), spec)
}

// startExecutor starts the executor in a session of its own, so that
// signals to the agent's process group do not reach it.
func (d *Driver) startExecutor(spec *executorSpec) (*osexec.Cmd, error) {
	logf, err := openLog(spec, filepath.Join(spec.StateDir, logFileName), 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	args := append(append([]string{}, d.cfg.ExecutorArgs...), filepath.Join(spec.StateDir, specFile))
	cmd := osexec.Command(d.cfg.ExecutorPath, args...)
	cmd.Env = append([]string{}, d.cfg.ExecutorEnv...)
	cmd.Dir = spec.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

// awaitPid polls for the executor's pid file until the deadline, the
// executor's exit or ctx's end.
func (d *Driver) awaitPid(ctx context.Context, t *task) (*pidFile, error) {
	path := filepath.Join(t.Data.StateDir, pidFileName)
	deadline := time.NewTimer(d.cfg.StartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pidPollInterval)
	defer tick.Stop()
	for {
		var pf pidFile
		err := readJSON(path, &pf)
		if err == nil {
			return &pf, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		select {
		case <-tick.C:
		case <-t.Done():
			if err := readJSON(path, &pf); err == nil {
				return &pf, nil
			}
			return nil, t.Result().Err
		case <-deadline.C:
			return nil, fmt.Errorf("%w after %s", ErrStartTimeout, d.cfg.StartTimeout)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// killStarted kills an executor whose start failed, and its task if it
// got as far as starting one. The watcher reaps the executor.
func killStarted(cmd *osexec.Cmd, stateDir string) {
	var pf pidFile
	if readJSON(filepath.Join(stateDir, pidFileName), &pf) == nil && pf.Pid > 0 {
		_ = syscall.Kill(-pf.Pid, syscall.SIGKILL)
	}
	_ = cmd.Process.Kill()
}

// reap waits for the executor this driver started to exit and reaps it.
// It does not reap when ctx ends first (Shutdown).
func reap(ctx context.Context, cmd *osexec.Cmd) bool {
	if !waitExit(ctx, cmd.Process.Pid, 0) {
		return false
	}
	_ = cmd.Wait() // the executor's own status says nothing; exit.json does
	return true
}
