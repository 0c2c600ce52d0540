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
// executor binary exists.
func (d *Driver) Fingerprint(context.Context) driver.Fingerprint {
	fp := driver.Fingerprint{Detected: true, Healthy: true, HealthDescription: "Healthy",
		Attributes: map[string]string{"driver." + Name: "1"}}
	if _, err := os.Stat(d.cfg.ExecutorPath); d.cfg.ExecutorPath == "" || err != nil {
		fp.Healthy = false
		fp.HealthDescription = fmt.Sprintf("executor binary %q unusable: %v", d.cfg.ExecutorPath, err)
	}
	return fp
}

// StopTask implements driver.Driver.
func (d *Driver) StopTask(ctx context.Context, taskID string, timeout time.Duration, signal string) error {
	sig, err := driver.StopSignal(signal)
	if err != nil {
		return err
	}
	t, err := d.get(taskID)
	if err != nil {
		return err
	}
	if t.exited() {
		return nil
	}
	if err := killGroup(t, sig); err != nil {
		return fmt.Errorf("exec: %s: %w", taskID, err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
	}
	d.log.Info("task ignored stop signal, killing it", "task", taskID, "signal", sig, "timeout", timeout)
	return d.kill(ctx, t)
}

// DestroyTask implements driver.Driver.
func (d *Driver) DestroyTask(ctx context.Context, taskID string, force bool) error {
	t, err := d.get(taskID)
	if err != nil {
		return err
	}
	if !t.exited() {
		if !force {
			return fmt.Errorf("%w: %s", driver.ErrTaskRunning, taskID)
		}
		if err := d.kill(ctx, t); err != nil {
			return err
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tasks[taskID] == t {
		delete(d.tasks, taskID)
	}
	return nil
}

// SignalTask implements driver.Driver: the signal goes to the task's main
// process only, as in Nomad (StopTask signals the whole group).
func (d *Driver) SignalTask(_ context.Context, taskID string, signal string) error {
	sig, err := driver.ParseSignal(signal)
	if err != nil {
		return err
	}
	t, err := d.get(taskID)
	if err != nil {
		return err
	}
	if t.exited() {
		return fmt.Errorf("%w: %s has exited", driver.ErrTaskNotFound, taskID)
	}
	if err := syscall.Kill(t.handle.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("exec: %s: %w", taskID, err)
	}
	return nil
}

// kill SIGKILLs t's process group and waits until the task is gone.
func (d *Driver) kill(ctx context.Context, t *task) error {
	if err := killGroup(t, syscall.SIGKILL); err != nil {
		return fmt.Errorf("exec: %s: %w", t.id, err)
	}
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// killGroup signals t's process group; a group already gone is no error.
func killGroup(t *task, sig syscall.Signal) error {
	pgid := t.state.Pgid
	if pgid <= 0 {
		pgid = t.handle.Pid
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
