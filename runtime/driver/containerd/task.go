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

// taskData is what the driver keeps of a task besides the bookkeeping
// that driver.Task shares: its handle state and containerd's objects.
type taskData struct {
	state     handleState
	container client.Container
	task      client.Task
}

// task is one task the driver knows.
type task = driver.Task[taskData]

func newTask(id string, st handleState, c client.Container, t client.Task) *task {
	return driver.NewTask(id, taskData{state: st, container: c, task: t})
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
