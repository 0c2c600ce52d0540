package alloc

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// fakeVars is a variables table in memory whose blocking reads wait for
// a change (or their context).
type fakeVars struct {
	mu      sync.Mutex
	index   uint64
	items   map[string]map[string]string
	changed chan struct{}
}

var _ VarSource = (*fakeVars)(nil)

func newFakeVars() *fakeVars {
	return &fakeVars{index: 1, items: map[string]map[string]string{}, changed: make(chan struct{})}
}

func (f *fakeVars) set(path string, items map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.index++
	f.items[path] = items
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeVars) ReadVars(ctx context.Context, req *messages.VarReadRequest) (*messages.VarReadResponse, error) {
	for {
		f.mu.Lock()
		index, changed := f.index, f.changed
		if req.GetMinIndex() == 0 || index > req.GetMinIndex() {
			resp := &messages.VarReadResponse{Index: index}
			if it, ok := f.items[req.GetPath()]; ok && req.GetPath() != "" {
				resp.Vars = []*messages.VarData{{Path: req.GetPath(), Items: it, ModifyIndex: index}}
			}
			f.mu.Unlock()
			return resp, nil
		}
		f.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// TestTemplateChangedWhileAgentDown: a variable changed while the client
// agent was down. The restarted agent re-attaches to the running task,
// renders its templates again and, their output having changed, writes
// the file and applies change_mode restart; a restart over an unchanged
// variable restarts nothing.
func TestTemplateChangedWhileAgentDown(t *testing.T) {
	dbPath, root := filepath.Join(t.TempDir(), "client.db"), t.TempDir()
	drv, clock := driver.NewFake(), actors.NewFakeClock(time.Unix(1_700_000_000, 0))
	vars := newFakeVars()
	vars.set("nomad/jobs/web", map[string]string{"k": "one"})
	a := testAlloc("service", map[string]any{}, nil)
	a.Job.TaskGroups[0].Tasks[0].Templates = []*messages.TaskTemplate{{
		EmbeddedTmpl: `k={{ with nomadVar "nomad/jobs/web" }}{{ .k }}{{ end }}`, DestPath: "local/x.conf", ChangeMode: changeRestart}}
	file := filepath.Join(root, a.ID, "t", "local", "x.conf")
	read := func() string { b, _ := os.ReadFile(file); return string(b) }
	agent := func() *harness {
		h := newHarnessAt(t, dbPath, root, drv, clock)
		h.vars = vars
		h.spawn(a)
		return h
	}

	h := agent()
	h.waitFor("running", status(statusRunning))
	require.Equal(t, "k=one", read())
	require.Equal(t, 1, drv.Calls(driver.MethodStartTask))
	h.close() // the agent stops; the task keeps running

	h = agent() // nothing changed meanwhile
	require.Eventually(t, func() bool { return drv.Calls(driver.MethodRecoverTask) == 1 }, 5*time.Second, time.Millisecond)
	h.waitFor("re-attached", func(al *messages.Allocation) bool { return lastEvent(al.GetTaskStates()["t"]) == eventReattached })
	require.Never(t, func() bool { return drv.Calls(driver.MethodStartTask) > 1 }, 200*time.Millisecond, 5*time.Millisecond)
	h.close()

	vars.set("nomad/jobs/web", map[string]string{"k": "two"}) // while the agent is down
	h = agent()
	require.Eventually(t, func() bool { return drv.Calls(driver.MethodRecoverTask) == 2 }, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return drv.Calls(driver.MethodStartTask) == 2 }, 5*time.Second, time.Millisecond,
		"change_mode restart applies to the change made while the agent was down")
	require.Equal(t, "k=two", read())
	h.waitFor("running again", func(al *messages.Allocation) bool { return lastEvent(al.GetTaskStates()["t"]) == eventStarted })
	require.True(t, drv.Running(taskID))
}
