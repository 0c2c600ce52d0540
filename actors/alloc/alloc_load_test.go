package alloc

import (
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// flakyReads fails the first n reads of the state file, then reads it.
type flakyReads struct {
	db    *clientstate.DB
	fails int32
	n     atomic.Int32
}

func (f *flakyReads) read(id string) (*clientstate.StoredAlloc, error) {
	if f.n.Add(1) <= f.fails {
		return nil, errors.New("bbolt: transient read error")
	}
	return f.db.Alloc(id)
}

// TestFailedReadsAreRetried: after an agent restart, a failed read of the
// state file is no "nothing stored", and one of a task's stored handle no
// "no handle": the running task is not started again; the read is tried
// again with backoff on the injected clock (1 s, then 2 s), and then the
// task is re-attached.
func TestFailedReadsAreRetried(t *testing.T) {
	tests := []struct {
		name    string
		install func(h *harness) *atomic.Int32 // makes reads fail twice; returns their count
		loading bool                           // the allocation waits in phaseLoading
	}{
		{"state file", func(h *harness) *atomic.Int32 {
			r := &flakyReads{db: h.db, fails: 2}
			h.readAlloc = r.read
			return &r.n
		}, true},
		{"task handle", func(h *harness) *atomic.Int32 {
			r := &flakyHandles{db: h.db, fails: 2}
			h.readHandle = r.read
			return &r.n
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dbPath, root := filepath.Join(t.TempDir(), "client.db"), t.TempDir()
			drv, clock := driver.NewFake(), actors.NewFakeClock(time.Unix(1_700_000_000, 0))
			h := newHarnessAt(t, dbPath, root, drv, clock)
			a := testAlloc("service", map[string]any{}, nil)
			h.spawn(a)
			h.waitFor("running", status(statusRunning))
			h.close() // the agent stops; the task keeps running

			h = newHarnessAt(t, dbPath, root, drv, clock)
			reads := tt.install(h)
			h.spawn(a)
			waitReads := func(n int32) {
				t.Helper()
				require.Eventually(t, func() bool { return reads.Load() == n && clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
			}
			waitReads(1)
			if tt.loading {
				require.Equal(t, phaseLoading.String(), phaseOf(h, a.ID))
			}
			clock.Advance(time.Second)
			waitReads(2)
			clock.Advance(time.Second)
			require.Never(t, func() bool { return reads.Load() > 2 }, 50*time.Millisecond, time.Millisecond, "the second wait is 2 s")
			clock.Advance(time.Second)

			require.Eventually(t, func() bool { return drv.Calls(driver.MethodRecoverTask) == 1 }, 5*time.Second, time.Millisecond)
			h.waitFor("running again", status(statusRunning))
			require.Equal(t, int32(3), reads.Load())
			require.Equal(t, 1, drv.Calls(driver.MethodStartTask), "the running task is not started again")
			require.True(t, drv.Running(taskID))
		})
	}
}

// TestFailedStateReadKeepsStoredState: a stopped allocation whose state
// cannot be read yet is not written over with its spawn spec, and a stop
// sent meanwhile is kept.
func TestFailedStateReadKeepsStoredState(t *testing.T) {
	h := newHarness(t)
	a := testAlloc("service", map[string]any{}, nil)
	a.ClientStatus = statusComplete
	h.db.PutAlloc(a)
	h.db.Flush()
	reads := &flakyReads{db: h.db, fails: 1}
	h.readAlloc = reads.read
	spawned := testAlloc("service", map[string]any{}, nil)
	h.spawn(spawned)
	require.Eventually(t, func() bool { return reads.n.Load() == 1 && h.clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	h.db.Flush()
	stored, err := h.db.Alloc(a.ID)
	require.NoError(t, err)
	require.Equal(t, statusComplete, stored.Alloc.GetClientStatus(), "nothing was written")
	h.clock.Advance(time.Second)
	done := h.waitFor("complete", status(statusComplete))
	require.Zero(t, h.fake.Calls(driver.MethodStartTask))
	require.Empty(t, done.TaskStates)
}

// flakyHandles fails the first n reads of a task handle, then reads it.
type flakyHandles struct {
	db    *clientstate.DB
	fails int32
	n     atomic.Int32
}

func (f *flakyHandles) read(allocID, task string) ([]byte, error) {
	if f.n.Add(1) <= f.fails {
		return nil, errors.New("bbolt: transient read error")
	}
	return f.db.TaskHandle(allocID, task)
}
