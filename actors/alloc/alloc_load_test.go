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

// TestFailedStateReadIsRetried: after an agent restart, a failed read of
// the state file is no "nothing stored": the running task is not started
// again; the read is tried again after DefaultLoadRetry's backoff on the
// injected clock (1 s, then 2 s), and then the task is re-attached.
func TestFailedStateReadIsRetried(t *testing.T) {
	dbPath, root := filepath.Join(t.TempDir(), "client.db"), t.TempDir()
	drv, clock := driver.NewFake(), actors.NewFakeClock(time.Unix(1_700_000_000, 0))
	h := newHarnessAt(t, dbPath, root, drv, clock)
	a := testAlloc("service", map[string]any{}, nil)
	h.spawn(a)
	h.waitFor("running", status(StatusRunning))
	h.close() // the agent stops; the task keeps running

	h = newHarnessAt(t, dbPath, root, drv, clock)
	reads := &flakyReads{db: h.db, fails: 2}
	h.readAlloc = reads.read
	h.spawn(a)
	waitReads := func(n int32) {
		t.Helper()
		require.Eventually(t, func() bool { return reads.n.Load() == n && clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	}
	waitReads(1)
	require.Equal(t, PhaseLoading.String(), phaseOf(h, a.ID))
	clock.Advance(time.Second)
	waitReads(2)
	clock.Advance(time.Second)
	require.Never(t, func() bool { return reads.n.Load() > 2 }, 50*time.Millisecond, time.Millisecond, "the second wait is 2 s")
	clock.Advance(time.Second)

	require.Eventually(t, func() bool { return drv.Calls(driver.MethodRecoverTask) == 1 }, 5*time.Second, time.Millisecond)
	h.waitFor("running again", status(StatusRunning))
	require.Equal(t, int32(3), reads.n.Load())
	require.Equal(t, 1, drv.Calls(driver.MethodStartTask), "the running task is not started again")
	require.True(t, drv.Running(taskID))
}

// TestFailedStateReadKeepsStoredState: a stopped allocation whose state
// cannot be read yet is not written over with its spawn spec, and a stop
// sent meanwhile is kept.
func TestFailedStateReadKeepsStoredState(t *testing.T) {
	h := newHarness(t)
	a := testAlloc("service", map[string]any{}, nil)
	a.ClientStatus = StatusComplete
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
	require.Equal(t, StatusComplete, stored.Alloc.GetClientStatus(), "nothing was written")
	h.clock.Advance(time.Second)
	done := h.waitFor("complete", status(StatusComplete))
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

// TestFailedHandleReadIsRetried: after an agent restart, a failed read of
// a task's stored handle is no "no handle": the running task is not
// started again; the read is tried again with backoff on the injected
// clock (1 s, then 2 s), and then the task is re-attached.
func TestFailedHandleReadIsRetried(t *testing.T) {
	dbPath, root := filepath.Join(t.TempDir(), "client.db"), t.TempDir()
	drv, clock := driver.NewFake(), actors.NewFakeClock(time.Unix(1_700_000_000, 0))
	h := newHarnessAt(t, dbPath, root, drv, clock)
	a := testAlloc("service", map[string]any{}, nil)
	h.spawn(a)
	h.waitFor("running", status(StatusRunning))
	h.close() // the agent stops; the task keeps running

	h = newHarnessAt(t, dbPath, root, drv, clock)
	reads := &flakyHandles{db: h.db, fails: 2}
	h.readHandle = reads.read
	h.spawn(a)
	waitReads := func(n int32) {
		t.Helper()
		require.Eventually(t, func() bool { return reads.n.Load() == n && clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	}
	waitReads(1)
	clock.Advance(time.Second)
	waitReads(2)
	clock.Advance(time.Second)
	require.Never(t, func() bool { return reads.n.Load() > 2 }, 50*time.Millisecond, time.Millisecond, "the second wait is 2 s")
	clock.Advance(time.Second)

	require.Eventually(t, func() bool { return drv.Calls(driver.MethodRecoverTask) == 1 }, 5*time.Second, time.Millisecond)
	h.waitFor("running again", status(StatusRunning))
	require.Equal(t, int32(3), reads.n.Load())
	require.Equal(t, 1, drv.Calls(driver.MethodStartTask), "the running task is not started again")
	require.True(t, drv.Running(taskID))
}
