package driver

import (
	"context"
	"errors"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func newTestTasks(t *testing.T) *Tasks[string] {
	ts := NewTasks[string](slog.New(slog.DiscardHandler))
	t.Cleanup(func() { ts.Shutdown() })
	return ts
}

// addRunning adds a running task with id to ts.
func addRunning(ts *Tasks[string], id string) *Task[string] {
	t := NewTask(id, "data of "+id)
	ts.Add(t)
	return t
}

func TestTasksReserveRefusesRunningAndStartingIDs(t *testing.T) {
	ts := newTestTasks(t)
	require.NoError(t, ts.Reserve("a/web"))
	require.ErrorIs(t, ts.Reserve("a/web"), ErrTaskAlreadyStarted, "already starting")
	require.Equal(t, []string{"a/web"}, ts.Starting())
	ts.Release("a/web")
	require.Empty(t, ts.Starting())

	run := addRunning(ts, "a/web")
	require.ErrorIs(t, ts.Reserve("a/web"), ErrTaskAlreadyStarted, "running")
	ts.Finish(run, &ExitResult{ExitCode: 1})
	require.NoError(t, ts.Reserve("a/web"), "an ended run may start again")
}

func TestTasksWaitGetsTheResultOnceAndLateWaitersAtOnce(t *testing.T) {
	ts := newTestTasks(t)
	task := addRunning(ts, "a/web")
	early, err := ts.Wait(context.Background(), "a/web")
	require.NoError(t, err)
	require.False(t, task.Exited())
	require.Nil(t, task.Result())

	ts.Finish(task, &ExitResult{ExitCode: 3})
	ts.Finish(task, &ExitResult{ExitCode: 9}) // the first result stays
	require.Equal(t, 3, recv(t, early).ExitCode)
	require.True(t, task.Exited())
	require.Equal(t, 3, task.Result().ExitCode)
	late, err := ts.Wait(context.Background(), "a/web")
	require.NoError(t, err)
	require.Equal(t, 3, recv(t, late).ExitCode)

	_, err = ts.Wait(context.Background(), "a/none")
	require.ErrorIs(t, err, ErrTaskNotFound)
}

func TestTasksKnownAddRecoveredAndRemove(t *testing.T) {
	ts := newTestTasks(t)
	known, err := ts.Known("a/web")
	require.NoError(t, err)
	require.False(t, known)
	first := NewTask("a/web", "first")
	ts.AddRecovered(first)
	ts.AddRecovered(NewTask("a/web", "second"))
	got, err := ts.Get("a/web")
	require.NoError(t, err)
	require.Same(t, first, got, "a second recovery does not replace the first")
	known, err = ts.Known("a/web")
	require.NoError(t, err)
	require.True(t, known)

	newer := NewTask("a/web", "newer run")
	ts.Add(newer)
	ts.Remove(first) // replaced: nothing to remove
	got, err = ts.Get("a/web")
	require.NoError(t, err)
	require.Same(t, newer, got)
	ts.Remove(newer)
	_, err = ts.Get("a/web")
	require.ErrorIs(t, err, ErrTaskNotFound)

	addRunning(ts, "a/db")
	addRunning(ts, "b/db")
	ts.RemoveIf(func(t *Task[string]) bool { return t.Data == "data of a/db" })
	_, err = ts.Get("a/db")
	require.ErrorIs(t, err, ErrTaskNotFound)
	_, err = ts.Get("b/db")
	require.NoError(t, err)
}

func TestTasksWatchFinishesTheTask(t *testing.T) {
	ts := newTestTasks(t)
	task := addRunning(ts, "a/web")
	exit := make(chan struct{})
	require.True(t, ts.Watch(task, func(context.Context) *ExitResult {
		<-exit
		return &ExitResult{ExitCode: 7}
	}))
	ch, err := ts.Wait(context.Background(), "a/web")
	require.NoError(t, err)
	close(exit)
	require.Equal(t, 7, recv(t, ch).ExitCode)
}

func TestTasksShutdownStopsWatchersAndEndsWaits(t *testing.T) {
	ts := NewTasks[string](slog.New(slog.DiscardHandler))
	task := addRunning(ts, "a/web")
	watcherSawCancel := false
	require.True(t, ts.Watch(task, func(ctx context.Context) *ExitResult {
		<-ctx.Done()
		watcherSawCancel = true
		return nil // no result: the task still runs
	}))
	ch, err := ts.Wait(context.Background(), "a/web")
	require.NoError(t, err)

	require.True(t, ts.Shutdown())
	require.True(t, watcherSawCancel, "Shutdown waits for the watchers")
	r := recv(t, ch)
	require.ErrorIs(t, r.Err, ErrShutdown)
	require.False(t, task.Exited(), "the task itself keeps running")
	require.False(t, ts.Shutdown(), "the second call reports it was shut down already")

	_, err = ts.Get("a/web")
	require.ErrorIs(t, err, ErrShutdown)
	_, err = ts.Wait(context.Background(), "a/web")
	require.ErrorIs(t, err, ErrShutdown)
	require.ErrorIs(t, ts.Reserve("a/db"), ErrShutdown)
	_, err = ts.Known("a/web")
	require.ErrorIs(t, err, ErrShutdown)
	require.False(t, ts.Watch(task, func(context.Context) *ExitResult { panic("must not run") }))
}

// fakeProcs records the calls Tasks makes and finishes the task on the
// ones named in endOn.
type fakeProcs struct {
	ts    *Tasks[string]
	calls []string
	endOn map[string]bool
	err   error
}

func (p *fakeProcs) call(t *Task[string], what string) error {
	p.calls = append(p.calls, what)
	if p.err != nil {
		return p.err
	}
	if p.endOn[what] {
		p.ts.Finish(t, &ExitResult{ExitCode: 143})
	}
	return nil
}

func (p *fakeProcs) Stop(_ context.Context, t *Task[string], sig syscall.Signal) error {
	return p.call(t, "stop "+sig.String())
}

func (p *fakeProcs) Signal(_ context.Context, t *Task[string], sig syscall.Signal) error {
	return p.call(t, "signal "+sig.String())
}

func (p *fakeProcs) Kill(_ context.Context, t *Task[string]) error { return p.call(t, "kill") }

func TestTasksStop(t *testing.T) {
	ctx := context.Background()
	t.Run("ends on the signal", func(t *testing.T) {
		ts := newTestTasks(t)
		addRunning(ts, "a/web")
		p := &fakeProcs{ts: ts, endOn: map[string]bool{"stop interrupt": true}}
		require.NoError(t, ts.Stop(ctx, "a/web", time.Hour, "SIGINT", p))
		require.Equal(t, []string{"stop interrupt"}, p.calls)
	})
	t.Run("killed after the timeout", func(t *testing.T) {
		ts := newTestTasks(t)
		addRunning(ts, "a/web")
		p := &fakeProcs{ts: ts, endOn: map[string]bool{"kill": true}}
		require.NoError(t, ts.Stop(ctx, "a/web", time.Millisecond, "", p))
		require.Equal(t, []string{"stop terminated", "kill"}, p.calls, "SIGTERM by default, then SIGKILL")
	})
	t.Run("ended task is done", func(t *testing.T) {
		ts := newTestTasks(t)
		ts.Finish(addRunning(ts, "a/web"), &ExitResult{})
		p := &fakeProcs{ts: ts}
		require.NoError(t, ts.Stop(ctx, "a/web", time.Hour, "", p))
		require.Empty(t, p.calls)
	})
	t.Run("errors", func(t *testing.T) {
		ts := newTestTasks(t)
		addRunning(ts, "a/web")
		p := &fakeProcs{ts: ts}
		require.ErrorIs(t, ts.Stop(ctx, "a/web", time.Hour, "SIGNOPE", p), ErrUnknownSignal)
		require.ErrorIs(t, ts.Stop(ctx, "a/none", time.Hour, "", p), ErrTaskNotFound)
		p.err = errors.New("boom")
		require.ErrorIs(t, ts.Stop(ctx, "a/web", time.Hour, "", p), p.err)
		p.err = nil
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		require.ErrorIs(t, ts.Stop(cctx, "a/web", time.Hour, "", p), context.Canceled)
	})
}

func TestTasksSignal(t *testing.T) {
	ctx := context.Background()
	ts := newTestTasks(t)
	task := addRunning(ts, "a/web")
	p := &fakeProcs{ts: ts}
	require.NoError(t, ts.Signal(ctx, "a/web", "HUP", p))
	require.Equal(t, []string{"signal hangup"}, p.calls)
	require.ErrorIs(t, ts.Signal(ctx, "a/web", "", p), ErrUnknownSignal, "no default signal")
	ts.Finish(task, &ExitResult{})
	require.ErrorIs(t, ts.Signal(ctx, "a/web", "HUP", p), ErrTaskNotFound, "an ended task")
	require.Len(t, p.calls, 1)
}

func TestTasksHalt(t *testing.T) {
	ctx := context.Background()
	ts := newTestTasks(t)
	task := addRunning(ts, "a/web")
	p := &fakeProcs{ts: ts, endOn: map[string]bool{"kill": true}}
	_, err := ts.Halt(ctx, "a/web", false, p)
	require.ErrorIs(t, err, ErrTaskRunning)
	require.Empty(t, p.calls)
	got, err := ts.Halt(ctx, "a/web", true, p)
	require.NoError(t, err)
	require.Same(t, task, got)
	require.True(t, task.Exited())
	require.Equal(t, []string{"kill"}, p.calls)
	got, err = ts.Halt(ctx, "a/web", false, p)
	require.NoError(t, err, "an ended task needs no force")
	require.Same(t, task, got)
	require.Len(t, p.calls, 1)
	_, err = ts.Get("a/web")
	require.NoError(t, err, "Halt leaves the removal to the driver")
}

func TestUnsupported(t *testing.T) {
	ctx := context.Background()
	var u interface {
		Fingerprint(context.Context) Fingerprint
		StartTask(context.Context, *TaskConfig) (*TaskHandle, error)
		RecoverTask(context.Context, *TaskHandle) error
		StopTask(context.Context, string, time.Duration, string) error
		DestroyTask(context.Context, string, bool) error
		SignalTask(context.Context, string, string) error
	} = Unsupported{Driver: "exec"}
	fp := u.Fingerprint(ctx)
	require.False(t, fp.Detected)
	require.Equal(t, ErrNotSupported.Error(), fp.HealthDescription)
	_, err := u.StartTask(ctx, fakeCfg("a/web"))
	require.ErrorIs(t, err, ErrNotSupported)
	require.EqualError(t, err, "exec: "+ErrNotSupported.Error())
	require.ErrorIs(t, u.RecoverTask(ctx, &TaskHandle{}), ErrNotSupported)
	require.ErrorIs(t, u.StopTask(ctx, "a/web", time.Second, ""), ErrNotSupported)
	require.ErrorIs(t, u.DestroyTask(ctx, "a/web", true), ErrNotSupported)
	require.ErrorIs(t, u.SignalTask(ctx, "a/web", "HUP"), ErrNotSupported)
}
