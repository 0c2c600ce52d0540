package alloc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/troupe-dev/troupe/messages"
)

// Hook is one step of an allocation's setup and teardown. Hooks run in
// order before the tasks start (Prerun) and in reverse order after every
// task is dead (Postrun); a hook implements only the phases it needs.
// Network, volume and device hooks slot in here.
type Hook interface {
	Name() string
}

// PrerunHook prepares the allocation before its tasks start.
type PrerunHook interface {
	Prerun(ctx context.Context, a *messages.Allocation) error
}

// PostrunHook releases what Prerun took, once every task is dead.
type PostrunHook interface {
	Postrun(ctx context.Context, a *messages.Allocation) error
}

// AllocDirHook creates the allocation's directory tree:
// <root>/<alloc-id>/alloc (shared) and <root>/<alloc-id>/<task> per task.
type AllocDirHook struct {
	Root string
}

// Name implements Hook.
func (h *AllocDirHook) Name() string { return "alloc_dir" }

// Prerun implements PrerunHook.
func (h *AllocDirHook) Prerun(_ context.Context, a *messages.Allocation) error {
	dirs := []string{filepath.Join(h.Root, a.GetID(), "alloc")}
	for _, t := range groupOf(a).GetTasks() {
		dirs = append(dirs, TaskDir(h.Root, a.GetID(), t.GetName()))
		if cfg := t.GetCSIPluginConfig(); cfg != nil {
			dirs = append(dirs, filepath.Dir(PluginSocketPath(h.Root, a.GetID(), t.GetName(), cfg.GetMountDir())))
		}
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("alloc dir: %w", err)
		}
	}
	return nil
}

// Postrun implements PostrunHook: it removes the short socket directories
// that stood in for CSI plugin mount dirs too deep for a unix socket path
// (the alloc dir itself stays, with the logs).
func (h *AllocDirHook) Postrun(_ context.Context, a *messages.Allocation) error {
	var errs []error
	for _, t := range groupOf(a).GetTasks() {
		cfg := t.GetCSIPluginConfig()
		if cfg == nil {
			continue
		}
		dir := filepath.Dir(PluginSocketPath(h.Root, a.GetID(), t.GetName(), cfg.GetMountDir()))
		if !strings.HasPrefix(dir, filepath.Join(h.Root, a.GetID())+string(filepath.Separator)) {
			errs = append(errs, os.RemoveAll(dir))
		}
	}
	return errors.Join(errs...)
}

// TaskDir is where a task runs and writes its stdout and stderr files.
func TaskDir(root, allocID, task string) string {
	return filepath.Join(root, allocID, task)
}

// runHooks runs the prerun (or, reversed, the postrun) phase of hooks.
func runHooks(ctx context.Context, hooks []Hook, a *messages.Allocation, post bool) error {
	if post {
		var first error
		for i := len(hooks) - 1; i >= 0; i-- {
			if h, ok := hooks[i].(PostrunHook); ok {
				if err := h.Postrun(ctx, a); err != nil && first == nil {
					first = fmt.Errorf("%s: %w", hooks[i].Name(), err)
				}
			}
		}
		return first
	}
	for _, h := range hooks {
		if p, ok := h.(PrerunHook); ok {
			if err := p.Prerun(ctx, a); err != nil {
				return fmt.Errorf("%s: %w", h.Name(), err)
			}
		}
	}
	return nil
}

// groupOf finds the allocation's task group in its job.
func groupOf(a *messages.Allocation) *messages.TaskGroup {
	for _, g := range a.GetJob().GetTaskGroups() {
		if g.GetName() == a.GetTaskGroup() {
			return g
		}
	}
	return nil
}
