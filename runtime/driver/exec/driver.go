package exec

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// Name is the exec driver's name.
const Name = "exec"

// Config configures a Driver. The zero value runs this binary as
// "<self> executor <spec>".
type Config struct {
	// ExecutorPath is the binary run as the executor; default os.Executable().
	ExecutorPath string
	// ExecutorArgs come before the spec path; default ["executor"].
	ExecutorArgs []string
	// ExecutorEnv is the executor's whole environment (the task's own
	// environment travels in the spec).
	ExecutorEnv []string
	// StartTimeout bounds how long StartTask waits for the task's pid;
	// default 10s.
	StartTimeout time.Duration
	Logger       *slog.Logger
}

var _ driver.Driver = (*Driver)(nil)

// Driver is the exec task driver. Create it with New; call Shutdown when
// done, which stops its watchers but leaves the tasks running.
type Driver struct {
	cfg    Config
	log    *slog.Logger
	ctx    context.Context // cancelled by Shutdown
	cancel context.CancelFunc
	wg     sync.WaitGroup // watcher goroutines

	mu       sync.Mutex
	closed   bool
	tasks    map[string]*task
	starting map[string]bool
}

// New returns a Driver with cfg's defaults filled in.
func New(cfg Config) *Driver {
	if cfg.ExecutorPath == "" {
		cfg.ExecutorPath, _ = os.Executable()
	}
	if cfg.ExecutorArgs == nil {
		cfg.ExecutorArgs = []string{"executor"}
	}
	cfg.ExecutorArgs = slices.Clone(cfg.ExecutorArgs)
	cfg.ExecutorEnv = slices.Clone(cfg.ExecutorEnv)
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Driver{cfg: cfg, log: cfg.Logger.With("driver", Name), ctx: ctx, cancel: cancel,
		tasks: map[string]*task{}, starting: map[string]bool{}}
}

// Name implements driver.Driver.
func (d *Driver) Name() string { return Name }

// Shutdown stops the driver's watcher goroutines and waits for them. Tasks
// keep running; pending WaitTask channels get driver.ErrShutdown. It is
// safe to call more than once.
func (d *Driver) Shutdown() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.cancel()
	d.wg.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range d.tasks {
		for _, w := range t.waiters {
			w.Deliver(&driver.ExitResult{ExitCode: -1, Err: driver.ErrShutdown})
		}
		t.waiters = nil
	}
}

// WaitTask implements driver.Driver.
func (d *Driver) WaitTask(ctx context.Context, taskID string) (<-chan *driver.ExitResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, driver.ErrShutdown
	}
	t, err := d.lookup(taskID)
	if err != nil {
		return nil, err
	}
	w := driver.NewWaiter(ctx)
	if t.result != nil {
		w.Deliver(t.result)
	} else {
		t.waiters = append(t.waiters, w)
	}
	return w.C(), nil
}

// lookup finds a task; the caller holds d.mu.
func (d *Driver) lookup(taskID string) (*task, error) {
	t, ok := d.tasks[taskID]
	if !ok {
		return nil, fmt.Errorf("%w: %s", driver.ErrTaskNotFound, taskID)
	}
	return t, nil
}

// get is lookup with the lock taken, refusing after Shutdown.
func (d *Driver) get(taskID string) (*task, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, driver.ErrShutdown
	}
	return d.lookup(taskID)
}

// watch runs wait in a goroutine the driver owns; when wait reports the
// watched process gone, it reads the exit status and finishes t. It
// returns false, starting nothing, after Shutdown.
func (d *Driver) watch(t *task, wait func(ctx context.Context) bool) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return false
	}
	stateDir := t.state.StateDir
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		if !wait(d.ctx) {
			return
		}
		d.finish(t, readExit(stateDir))
	}()
	return true
}

// finish records t's result once, wakes its waiters and closes t.done.
func (d *Driver) finish(t *task, r *driver.ExitResult) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if t.result != nil {
		return
	}
	t.result = r
	for _, w := range t.waiters {
		w.Deliver(r)
	}
	t.waiters = nil
	close(t.done)
	d.log.Debug("task exited", "task", t.id, "exit_code", r.ExitCode, "signal", r.Signal, "err", r.Err)
}
