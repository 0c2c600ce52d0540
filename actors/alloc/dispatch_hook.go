package alloc

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// payloadMode is a dispatch payload file's mode: readable by the task
// whatever user it runs as (the task dirs are not chowned either).
const payloadMode = 0o644

// dispatchPayloadHook writes a dispatched job's payload into each task
// that asks for it (dispatch_payload { file }): <task>/local/<file>,
// before the task starts. The file stays beneath local/ (never through a
// symlink); its directories are made as needed.
type dispatchPayloadHook struct {
	root string
}

// Name implements Hook.
func (h *dispatchPayloadHook) Name() string { return "dispatch_payload" }

// Prerun implements prerunHook. It runs after the alloc dir hook made
// the task dirs.
func (h *dispatchPayloadHook) Prerun(_ context.Context, a *messages.Allocation) error {
	payload := a.GetJob().GetPayload()
	for _, t := range groupOf(a).GetTasks() {
		dp := t.GetDispatchPayload()
		if dp == nil || dp.GetFile() == "" {
			continue
		}
		if err := writePayload(h.root, a.GetID(), t.GetName(), dp.GetFile(), payload); err != nil {
			return fmt.Errorf("dispatch payload of task %s: %w", safepath.Quote(t.GetName()), err)
		}
	}
	return nil
}

func writePayload(root, allocID, task, file string, payload []byte) error {
	rel, err := safepath.CleanRel(file)
	if err != nil {
		return err
	}
	local := filepath.Join(TaskDir(root, allocID, task), localDirName)
	path := filepath.Join(local, rel)
	if !safepath.Within(local, path) || path == local {
		return fmt.Errorf("%w: %s", safepath.ErrOutside, safepath.Quote(file))
	}
	if err := safepath.MkdirAll(local, filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return safepath.WriteFileAtomic(local, path, payload, payloadMode)
}
