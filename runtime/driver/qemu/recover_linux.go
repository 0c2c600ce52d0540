package qemu

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// RecoverTask implements driver.Driver: it re-attaches to a VM whose shim
// still runs, takes the result from the exit file when the VM ended while
// no driver watched, watches qemu alone when only the shim died, and
// fails with ErrTaskNotFound when both are gone (or their pids reused).
func (d *Driver) RecoverTask(_ context.Context, h *driver.TaskHandle) error {
	st, err := decodeHandle(h)
	if err != nil {
		return err
	}
	if known, err := d.tasks.Known(h.TaskID); known || err != nil {
		return err
	}
	t := driver.NewTask(h.TaskID, st)
	t.Handle = *h
	exitFile := filepath.Join(st.StateDir, exitFileName)
	switch {
	case alive(st.ShimPid, st.ShimStartTicks):
		if !d.tasks.Watch(t, func(ctx context.Context) *driver.ExitResult {
			if !waitGone(ctx, st.ShimPid, st.ShimStartTicks) {
				return nil
			}
			waitLogs(ctx, st)
			return readExit(st.StateDir)
		}) {
			return driver.ErrShutdown
		}
	case fileExists(exitFile):
		d.tasks.Finish(t, readExit(st.StateDir))
	case alive(h.Pid, h.StartTicks):
		d.log.Warn("shim gone, watching qemu alone", "task", h.TaskID, "pid", h.Pid)
		if !d.tasks.Watch(t, func(ctx context.Context) *driver.ExitResult {
			if !waitGone(ctx, h.Pid, h.StartTicks) {
				return nil
			}
			waitLogs(ctx, st)
			return readExit(st.StateDir)
		}) {
			return driver.ErrShutdown
		}
	default:
		return fmt.Errorf("%w: %s: qemu pid %d is gone or reused", driver.ErrTaskNotFound, h.TaskID, h.Pid)
	}
	d.tasks.AddRecovered(t)
	d.log.Info("vm recovered", "task", h.TaskID, "pid", h.Pid, "exited", t.Exited())
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// decodeHandle checks that h is a qemu handle and returns its state.
func decodeHandle(h *driver.TaskHandle) (handleState, error) {
	var st handleState
	if h == nil || h.Driver != Name || h.TaskID == "" {
		return st, fmt.Errorf("%w: not a %s handle", driver.ErrInvalidHandle, Name)
	}
	if err := json.Unmarshal(h.State, &st); err != nil {
		return st, fmt.Errorf("%w: %s: %w", driver.ErrInvalidHandle, h.TaskID, err)
	}
	if st.StateDir == "" || st.ShimPid <= 0 || h.Pid <= 0 || st.Monitor == "" {
		return st, fmt.Errorf("%w: %s: incomplete state", driver.ErrInvalidHandle, h.TaskID)
	}
	return st, nil
}
