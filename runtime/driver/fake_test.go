package driver

import (
	"context"
	"encoding/json"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func fakeCfg(id string) *TaskConfig {
	return &TaskConfig{ID: id, Config: map[string]any{"command": "x"}, Env: map[string]string{"A": "1"}}
}

// recv reads one result and checks that the channel then closes.
func recv(t *testing.T, ch <-chan *ExitResult) *ExitResult {
	t.Helper()
	select {
	case r := <-ch:
		_, open := <-ch
		require.False(t, open, "channel must close after its result")
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no exit result")
		return nil
	}
}

func TestFakeLifecycle(t *testing.T) {
	ctx := context.Background()
	f := NewFake()
	h, err := f.StartTask(ctx, fakeCfg("a/web"))
	require.NoError(t, err)
	require.Equal(t, FakeName, h.Driver)
	require.True(t, f.Running("a/web"))
	_, err = f.StartTask(ctx, fakeCfg("a/web"))
	require.ErrorIs(t, err, ErrTaskAlreadyStarted)

	ch, err := f.WaitTask(ctx, "a/web")
	require.NoError(t, err)
	require.NoError(t, f.Exit("a/web", 3))
	r := recv(t, ch)
	require.Equal(t, 3, r.ExitCode)
	require.False(t, r.Successful())
	require.False(t, f.Running("a/web"))

	// A wait after the exit gets the result at once.
	r = recv(t, must(f.WaitTask(ctx, "a/web")))
	require.Equal(t, 3, r.ExitCode)

	// Restarting an exited task is allowed.
	h2, err := f.StartTask(ctx, fakeCfg("a/web"))
	require.NoError(t, err)
	require.NotEqual(t, h.Pid, h2.Pid)
	require.Equal(t, 3, f.Calls(MethodStartTask))
	require.Equal(t, 2, f.Calls(MethodWaitTask))
	require.Equal(t, []string{"a/web"}, f.TaskIDs())
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestFakeInjectedErrors(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	tests := []struct {
		name   string
		inject func(f *Fake)
		call   func(f *Fake, h *TaskHandle) error
		method string
	}{
		{"start", func(f *Fake) { f.NextStartErr = boom },
			func(f *Fake, h *TaskHandle) error { _, err := f.StartTask(ctx, fakeCfg("a/t2")); return err }, MethodStartTask},
		{"recover", func(f *Fake) { f.NextRecoverErr = boom },
			func(f *Fake, h *TaskHandle) error { return f.RecoverTask(ctx, h) }, MethodRecoverTask},
		{"wait", func(f *Fake) { f.NextWaitErr = boom },
			func(f *Fake, h *TaskHandle) error { _, err := f.WaitTask(ctx, "a/t"); return err }, MethodWaitTask},
		{"stop", func(f *Fake) { f.NextStopErr = boom },
			func(f *Fake, h *TaskHandle) error { return f.StopTask(ctx, "a/t", time.Second, "") }, MethodStopTask},
		{"destroy", func(f *Fake) { f.NextDestroyErr = boom },
			func(f *Fake, h *TaskHandle) error { return f.DestroyTask(ctx, "a/t", true) }, MethodDestroyTask},
		{"signal", func(f *Fake) { f.NextSignalErr = boom },
			func(f *Fake, h *TaskHandle) error { return f.SignalTask(ctx, "a/t", "HUP") }, MethodSignalTask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFake()
			h, err := f.StartTask(ctx, fakeCfg("a/t"))
			require.NoError(t, err)
			before := f.Calls(tt.method)
			f.Inject(tt.inject)
			require.ErrorIs(t, tt.call(f, h), boom)
			require.NoError(t, tt.call(f, h), "an injected error fails one call only")
			require.Equal(t, before+2, f.Calls(tt.method))
		})
	}
}

func TestFakeStopDestroySignal(t *testing.T) {
	ctx := context.Background()
	f := &Fake{} // the zero value works
	_, err := f.StartTask(ctx, fakeCfg("a/t"))
	require.NoError(t, err)
	require.NoError(t, f.SignalTask(ctx, "a/t", "SIGHUP"))
	require.True(t, f.Running("a/t"), "a signal is only recorded")
	require.ErrorIs(t, f.SignalTask(ctx, "a/t", "NOPE"), ErrUnknownSignal)
	require.ErrorIs(t, f.DestroyTask(ctx, "a/t", false), ErrTaskRunning)

	ch := must(f.WaitTask(ctx, "a/t"))
	require.NoError(t, f.StopTask(ctx, "a/t", time.Second, ""))
	r := recv(t, ch)
	require.Equal(t, int(syscall.SIGTERM), r.Signal)
	require.Equal(t, 128+int(syscall.SIGTERM), r.ExitCode)
	require.Equal(t, []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM}, f.Signals("a/t"))

	require.NoError(t, f.DestroyTask(ctx, "a/t", false))
	require.Empty(t, f.TaskIDs())
	_, err = f.WaitTask(ctx, "a/t")
	require.ErrorIs(t, err, ErrTaskNotFound)
	require.ErrorIs(t, f.StopTask(ctx, "a/t", 0, ""), ErrTaskNotFound)
	require.ErrorIs(t, f.Exit("a/t", 0), ErrTaskNotFound)
}

func TestFakeRecover(t *testing.T) {
	ctx := context.Background()
	f := NewFake()
	h, err := f.StartTask(ctx, fakeCfg("a/t"))
	require.NoError(t, err)
	data, err := json.Marshal(h)
	require.NoError(t, err)
	var h2 TaskHandle
	require.NoError(t, json.Unmarshal(data, &h2))
	require.NoError(t, f.RecoverTask(ctx, &h2))
	require.ErrorIs(t, f.RecoverTask(ctx, &TaskHandle{Driver: "exec", TaskID: "a/t"}), ErrInvalidHandle)

	ch := must(f.WaitTask(ctx, "a/t"))
	f.Forget("a/t")
	require.ErrorIs(t, recv(t, ch).Err, ErrTaskNotFound)
	require.ErrorIs(t, f.RecoverTask(ctx, &h2), ErrTaskNotFound)
}

func TestFakeExitCodeConfigAndWaitCancel(t *testing.T) {
	ctx := context.Background()
	f := NewFake()
	cfg := fakeCfg("a/t")
	cfg.Config["exit_code"] = float64(4) // structpb numbers are float64
	_, err := f.StartTask(ctx, cfg)
	require.NoError(t, err)
	require.False(t, f.Running("a/t"))
	require.Equal(t, 4, recv(t, must(f.WaitTask(ctx, "a/t"))).ExitCode)

	got, ok := f.Task("a/t")
	require.True(t, ok)
	require.Equal(t, "1", got.Env["A"])

	_, err = f.StartTask(ctx, fakeCfg("a/u"))
	require.NoError(t, err)
	cctx, cancel := context.WithCancel(ctx)
	ch := must(f.WaitTask(cctx, "a/u"))
	cancel()
	r := recv(t, ch)
	require.ErrorIs(t, r.Err, context.Canceled)
	require.True(t, f.Running("a/u"), "cancelling a wait leaves the task running")
	require.NoError(t, f.Exit("a/u", 0)) // a cancelled waiter is not sent twice
}

func TestFakeFingerprint(t *testing.T) {
	f := NewFake()
	fp := f.Fingerprint(context.Background())
	require.True(t, fp.Detected)
	require.True(t, fp.Healthy)
	require.Equal(t, "1", fp.Attributes["driver.fake"])
	f.FingerprintResult = &Fingerprint{Detected: true, HealthDescription: "sick"}
	require.False(t, f.Fingerprint(context.Background()).Healthy)
	require.Equal(t, 2, f.Calls(MethodFingerprint))
}
