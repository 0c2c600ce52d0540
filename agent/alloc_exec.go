package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/troupe-dev/troupe/actors/alloc"
	"github.com/troupe-dev/troupe/httpapi"
	"github.com/troupe-dev/troupe/runtime/driver"
)

var _ httpapi.ExecBackend = (*Agent)(nil)

// ExecTask runs a command in a task of an allocation this client runs,
// through the driver that started the task (the task's handle in the
// client state file names it). A driver that cannot exec is a wrapped
// driver.ErrExecNotSupported; a task without a handle has not started or
// was stopped: a wrapped driver.ErrTaskNotFound.
func (a *Agent) ExecTask(ctx context.Context, allocID, task string, opts *driver.ExecOptions) (int, error) {
	if a.db == nil {
		return -1, ErrNotClient
	}
	sa, err := a.db.Alloc(allocID)
	if err != nil || sa == nil {
		return -1, fmt.Errorf("%w %q: it does not run on this client", ErrUnknownAlloc, allocID)
	}
	if !slices.Contains(alloc.Tasks(sa.Alloc), task) {
		return -1, fmt.Errorf("%w %q in allocation %q", ErrUnknownTask, task, allocID)
	}
	raw, ok := sa.Handles[task]
	if !ok {
		return -1, fmt.Errorf("%w: task %q of allocation %q is not running", driver.ErrTaskNotFound, task, allocID)
	}
	var h driver.TaskHandle
	if err := json.Unmarshal(raw, &h); err != nil {
		return -1, fmt.Errorf("%w: task %q of allocation %q: %w", driver.ErrInvalidHandle, task, allocID, err)
	}
	d, ok := a.drivers[h.Driver]
	if !ok {
		return -1, fmt.Errorf("%w: task %q of allocation %q runs on driver %q, which this client lacks",
			driver.ErrExecNotSupported, task, allocID, h.Driver)
	}
	return driver.ExecIn(ctx, d, h.TaskID, opts)
}
