package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"syscall"
	"time"
)

// Method names for Fake.Calls.
const (
	MethodFingerprint = "Fingerprint"
	MethodStartTask   = "StartTask"
	MethodRecoverTask = "RecoverTask"
	MethodWaitTask    = "WaitTask"
	MethodStopTask    = "StopTask"
	MethodDestroyTask = "DestroyTask"
	MethodSignalTask  = "SignalTask"
)

// FakeName is the Fake's driver name.
const FakeName = "fake"

var _ Driver = (*Fake)(nil)

// Fake is an in-memory Driver for actor tests. Tasks "run" until the test
// calls Exit, StopTask stops them, or their config has "exit_code", which
// makes them exit with that code right after they start.
//
// Next*Err make the next call of that method fail once. Set them before the
// Fake is shared with other goroutines, or inside Inject afterwards. The
// zero value is ready to use.
type Fake struct {
	NextStartErr   error
	NextRecoverErr error
	NextWaitErr    error
	NextStopErr    error
	NextDestroyErr error
	NextSignalErr  error
	// FingerprintResult is returned by Fingerprint; zero means healthy.
	FingerprintResult *Fingerprint

	mu      sync.Mutex
	calls   map[string]int
	tasks   map[string]*fakeTask
	lastPid int
}

type fakeTask struct {
	cfg     *TaskConfig
	handle  *TaskHandle
	signals []syscall.Signal
	outcome
}

// NewFake returns an empty Fake.
func NewFake() *Fake { return &Fake{} }

// Inject runs fn with the Fake locked, to set Next*Err while other
// goroutines use it.
func (f *Fake) Inject(fn func(f *Fake)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// Calls is how many times method (a Method* constant) was called.
func (f *Fake) Calls(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// record counts a call and returns the injected error, consuming it; the
// caller holds f.mu.
func (f *Fake) record(method string, next *error) error {
	if f.calls == nil {
		f.calls = map[string]int{}
		f.tasks = map[string]*fakeTask{}
	}
	f.calls[method]++
	if next == nil || *next == nil {
		return nil
	}
	err := *next
	*next = nil
	return err
}

// Name implements Driver.
func (f *Fake) Name() string { return FakeName }

// Fingerprint implements Driver.
func (f *Fake) Fingerprint(context.Context) Fingerprint {
	f.mu.Lock()
	defer f.mu.Unlock()
	_ = f.record(MethodFingerprint, nil)
	if f.FingerprintResult != nil {
		fp := *f.FingerprintResult
		fp.Attributes = maps.Clone(fp.Attributes)
		return fp
	}
	return Fingerprint{Detected: true, Healthy: true, HealthDescription: "Healthy",
		Attributes: map[string]string{"driver." + FakeName: "1"}}
}

// StartTask implements Driver.
func (f *Fake) StartTask(_ context.Context, cfg *TaskConfig) (*TaskHandle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record(MethodStartTask, &f.NextStartErr); err != nil {
		return nil, err
	}
	if cfg == nil || cfg.ID == "" {
		return nil, fmt.Errorf("%w: empty task id", ErrInvalidConfig)
	}
	if t, ok := f.tasks[cfg.ID]; ok && t.result == nil {
		return nil, fmt.Errorf("%w: %s", ErrTaskAlreadyStarted, cfg.ID)
	}
	f.lastPid++
	c := *cfg
	c.Config, c.Env = maps.Clone(cfg.Config), maps.Clone(cfg.Env)
	t := &fakeTask{cfg: &c, handle: &TaskHandle{Driver: FakeName, TaskID: cfg.ID,
		Pid: 1000 + f.lastPid, StartTicks: uint64(f.lastPid), StartedAt: time.Now(),
		State: json.RawMessage(`{}`)}}
	f.tasks[cfg.ID] = t
	if code, ok := exitCode(cfg.Config["exit_code"]); ok {
		t.finish(&ExitResult{ExitCode: code})
	}
	h := *t.handle
	return &h, nil
}

// exitCode reads a number from a structpb-decoded config value.
func exitCode(v any) (int, bool) {
	switch n := v.(type) {
	case float64:
		return int(n), true
	case int:
		return n, true
	case int64:
		return int(n), true
	}
	return 0, false
}

// RecoverTask implements Driver: a task the Fake knows (also one that has
// exited) recovers; any other is ErrTaskNotFound.
func (f *Fake) RecoverTask(_ context.Context, h *TaskHandle) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record(MethodRecoverTask, &f.NextRecoverErr); err != nil {
		return err
	}
	if h == nil || h.Driver != FakeName {
		return fmt.Errorf("%w: not a %s handle", ErrInvalidHandle, FakeName)
	}
	t, ok := f.tasks[h.TaskID]
	if !ok || t.handle.Pid != h.Pid {
		return fmt.Errorf("%w: %s", ErrTaskNotFound, h.TaskID)
	}
	return nil
}

// WaitTask implements Driver.
func (f *Fake) WaitTask(ctx context.Context, taskID string) (<-chan *ExitResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record(MethodWaitTask, &f.NextWaitErr); err != nil {
		return nil, err
	}
	t, err := f.task(taskID)
	if err != nil {
		return nil, err
	}
	return t.wait(ctx), nil
}

// StopTask implements Driver: the task exits at once, killed by the signal.
func (f *Fake) StopTask(_ context.Context, taskID string, _ time.Duration, signal string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record(MethodStopTask, &f.NextStopErr); err != nil {
		return err
	}
	sig, err := StopSignal(signal)
	if err != nil {
		return err
	}
	t, err := f.task(taskID)
	if err != nil {
		return err
	}
	t.signals = append(t.signals, sig)
	t.finish(killed(sig))
	return nil
}

// DestroyTask implements Driver.
func (f *Fake) DestroyTask(_ context.Context, taskID string, force bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record(MethodDestroyTask, &f.NextDestroyErr); err != nil {
		return err
	}
	t, err := f.task(taskID)
	if err != nil {
		return err
	}
	if t.result == nil && !force {
		return fmt.Errorf("%w: %s", ErrTaskRunning, taskID)
	}
	t.finish(killed(syscall.SIGKILL))
	delete(f.tasks, taskID)
	return nil
}

// SignalTask implements Driver: it records the signal; the task keeps
// running.
func (f *Fake) SignalTask(_ context.Context, taskID string, signal string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record(MethodSignalTask, &f.NextSignalErr); err != nil {
		return err
	}
	sig, err := ParseSignal(signal)
	if err != nil {
		return err
	}
	t, err := f.task(taskID)
	if err != nil {
		return err
	}
	t.signals = append(t.signals, sig)
	return nil
}

func (f *Fake) task(taskID string) (*fakeTask, error) {
	t, ok := f.tasks[taskID]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrTaskNotFound, taskID)
	}
	return t, nil
}

func killed(sig syscall.Signal) *ExitResult {
	return &ExitResult{ExitCode: 128 + int(sig), Signal: int(sig)}
}
