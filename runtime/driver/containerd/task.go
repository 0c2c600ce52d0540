package containerd

import (
	"encoding/json"
	"fmt"

	"github.com/containerd/containerd/v2/client"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// handleState is the containerd driver's TaskHandle.State.
type handleState struct {
	ContainerID string
	Namespace   string
	Image       string
}

// task is one task the driver knows. Its fields after done are guarded by
// the driver's mutex; done closes once result is set.
type task struct {
	id        string
	handle    driver.TaskHandle
	state     handleState
	container client.Container
	task      client.Task
	done      chan struct{}
	result    *driver.ExitResult
	waiters   []*driver.Waiter
}

func newTask(id string, st handleState, c client.Container, t client.Task) *task {
	return &task{id: id, state: st, container: c, task: t, done: make(chan struct{})}
}

// exited reports whether the task has ended, without blocking.
func (t *task) exited() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// decodeHandle checks that h is a containerd handle and returns its state.
func decodeHandle(h *driver.TaskHandle) (handleState, error) {
	var st handleState
	if h == nil || h.Driver != Name || h.TaskID == "" {
		return st, fmt.Errorf("%w: not a %s handle", driver.ErrInvalidHandle, Name)
	}
	if err := json.Unmarshal(h.State, &st); err != nil {
		return st, fmt.Errorf("%w: %s: %w", driver.ErrInvalidHandle, h.TaskID, err)
	}
	if st.ContainerID == "" {
		return st, fmt.Errorf("%w: %s: no container id", driver.ErrInvalidHandle, h.TaskID)
	}
	return st, nil
}

// archiveKey identifies one version of an image archive on the host.
type archiveKey struct {
	Path    string
	Size    int64
	ModTime int64
}
