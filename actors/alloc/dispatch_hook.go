package alloc

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/golang/snappy"

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
// the task dirs. The payload is decompressed (the job carries it
// snappy-compressed); one that does not decode fails the allocation.
func (h *dispatchPayloadHook) Prerun(_ context.Context, a *messages.Allocation) error {
	payload, err := decodePayload(a.GetJob().GetPayload())
	if err != nil {
		return err
	}
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

// decodePayload is a dispatched job's payload as the dispatch gave it:
// the job carries it snappy-compressed, as Nomad's does.
func decodePayload(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, nil
	}
	out, err := snappy.Decode(nil, b)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errPayloadCorrupt, err)
	}
	return out, nil
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
