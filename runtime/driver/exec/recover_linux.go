package exec

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// RecoverTask implements driver.Driver. It re-attaches to the executor when
// it still runs, takes the result from exit.json when the task ended while
// no driver watched, watches the bare task when only the executor died, and
// fails with ErrTaskNotFound when neither process is alive (a start-time
// mismatch counts as dead: the pid was reused).
func (d *Driver) RecoverTask(_ context.Context, h *driver.TaskHandle) error {
	st, err := decodeHandle(h, d.Name())
	if err != nil {
		return err
	}
	if known, err := d.tasks.Known(h.TaskID); known || err != nil {
		return err
	}
	t := driver.NewTask(h.TaskID, st)
	t.Handle = *h
	switch {
	case alive(st.ExecutorPid, st.ExecutorStartTicks):
		if !d.watch(t, func(ctx context.Context) bool {
			return waitExit(ctx, st.ExecutorPid, st.ExecutorStartTicks)
		}) {
			return driver.ErrShutdown
		}
	case exitFileExists(st.StateDir):
		d.tasks.Finish(t, readExit(st.StateDir))
	case alive(h.Pid, h.StartTicks):
		d.log.Warn("executor gone, watching the task alone", "task", h.TaskID, "pid", h.Pid)
		if !d.watch(t, func(ctx context.Context) bool { return waitExit(ctx, h.Pid, h.StartTicks) }) {
			return driver.ErrShutdown
		}
	default:
		return fmt.Errorf("%w: %s: pid %d is gone or reused", driver.ErrTaskNotFound, h.TaskID, h.Pid)
	}
	d.recoverCgroup(t)
	d.tasks.AddRecovered(t)
	d.log.Info("task recovered", "task", h.TaskID, "pid", h.Pid, "exited", t.Exited())
	return nil
}

// decodeHandle checks that h is a handle of the driver named name and
// returns its state.
func decodeHandle(h *driver.TaskHandle, name string) (handleState, error) {
	var st handleState
	if h == nil || h.Driver != name || h.TaskID == "" {
		return st, fmt.Errorf("%w: not an %s handle", driver.ErrInvalidHandle, name)
	}
	if err := json.Unmarshal(h.State, &st); err != nil {
		return st, fmt.Errorf("%w: %s: %w", driver.ErrInvalidHandle, h.TaskID, err)
	}
	if st.StateDir == "" || st.ExecutorPid <= 0 || h.Pid <= 0 {
		return st, fmt.Errorf("%w: %s: incomplete state", driver.ErrInvalidHandle, h.TaskID)
	}
	return st, nil
}
