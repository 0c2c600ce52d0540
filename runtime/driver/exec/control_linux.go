package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// Fingerprint implements driver.Driver: exec runs on any Linux host whose
// executor binary exists; a disabled driver is undetected.
func (d *Driver) Fingerprint(context.Context) driver.Fingerprint {
	if d.cfg.Disabled {
		return driver.Fingerprint{HealthDescription: "disabled"}
	}
	fp := driver.Fingerprint{Detected: true, Healthy: true, HealthDescription: "Healthy",
		Attributes: map[string]string{"driver." + d.Name(): "1"}}
	if _, err := os.Stat(d.cfg.ExecutorPath); d.cfg.ExecutorPath == "" || err != nil {
		fp.Healthy = false
		fp.HealthDescription = fmt.Sprintf("executor binary %q unusable: %v", d.cfg.ExecutorPath, err)
	}
	return fp
}

// StopTask implements driver.Driver: the signal goes to the task's
// process group.
func (d *Driver) StopTask(ctx context.Context, taskID string, timeout time.Duration, signal string) error {
	return d.tasks.Stop(ctx, taskID, timeout, signal, procs{d})
}

// DestroyTask implements driver.Driver.
func (d *Driver) DestroyTask(ctx context.Context, taskID string, force bool) error {
	t, err := d.tasks.Halt(ctx, taskID, force, procs{d})
	if err != nil {
		return err
	}
	d.tasks.Remove(t)
	return d.removeCgroup(t)
}

// SignalTask implements driver.Driver: the signal goes to the task's main
// process only, as in Nomad (StopTask signals the whole group).
func (d *Driver) SignalTask(ctx context.Context, taskID string, signal string) error {
	return d.tasks.Signal(ctx, taskID, signal, procs{d})
}

// platform holds, on Linux, where the Driver has its own host methods,
// its tasks' cgroups (cgroup_linux.go).
type platform struct{ cg *taskCgroups }

func newPlatform() platform { return platform{cg: &taskCgroups{}} }

// procs signals the processes of exec tasks: StopTask's signal and the
// kill go to the task's process group, SignalTask's to its main process.
type procs struct{ d *Driver }

var _ driver.Processes[handleState] = procs{}

func (procs) Stop(_ context.Context, t *task, sig syscall.Signal) error {
	return killGroup(t, sig)
}

func (procs) Signal(_ context.Context, t *task, sig syscall.Signal) error {
	if err := syscall.Kill(t.Handle.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("exec: %s: %w", t.ID, err)
	}
	return nil
}

// Kill kills the task's process group and then everything in its cgroup.
func (p procs) Kill(_ context.Context, t *task) error {
	err := killGroup(t, syscall.SIGKILL)
	if p.d != nil {
		err = errors.Join(err, p.d.killCgroup(t))
	}
	return err
}

// killGroup signals t's process group; a group already gone is no error.
func killGroup(t *task, sig syscall.Signal) error {
	pgid := t.Data.Pgid
	if pgid <= 0 {
		pgid = t.Handle.Pid
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("exec: %s: %w", t.ID, err)
	}
	return nil
}
