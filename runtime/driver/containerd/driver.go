package containerd

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// Name is the containerd driver's name.
const Name = "containerd"

// Defaults of Config.
const (
	DefaultAddress     = "/run/containerd/containerd.sock"
	DefaultNamespace   = "troupe"
	DefaultSnapshotter = "overlayfs"
	DefaultRuntime     = "io.containerd.runc.v2"
)

// Config configures a Driver; the zero value uses the defaults above.
type Config struct {
	// Address is containerd's gRPC socket.
	Address string
	// Namespace is the containerd namespace of troupe's containers,
	// images and snapshots.
	Namespace   string
	Snapshotter string
	// Runtime is the containerd runtime (shim) that runs tasks.
	Runtime string
	// PullTimeout bounds one image pull or import; default 5m.
	PullTimeout time.Duration
	// RequestTimeout bounds Fingerprint's probe and the cleanup of a failed
	// start; default 10s.
	RequestTimeout time.Duration
	// ReconnectTimeout is how long a task's watcher keeps retrying while
	// containerd is unreachable before it reports ErrWaitLost; default 5m.
	ReconnectTimeout time.Duration
	Logger           *slog.Logger
}

var _ driver.Driver = (*Driver)(nil)

// Driver is the containerd task driver. Create it with New; call Shutdown
// when done, which stops its watchers and leaves the containers running.
type Driver struct {
	cfg       Config
	log       *slog.Logger
	client    *client.Client
	clientErr error
	ctx       context.Context // cancelled by Shutdown
	cancel    context.CancelFunc
	wg        sync.WaitGroup // watcher goroutines
	importMu  sync.Mutex     // serialises archive imports

	mu       sync.Mutex
	closed   bool
	tasks    map[string]*task
	starting map[string]bool
	archives map[archiveKey]string // imported archive -> image name
}

// New returns a Driver for cfg. It does not contact containerd: a daemon
// that is down shows in Fingerprint, and calls fail until it is up.
func New(cfg Config) *Driver {
	if cfg.Address == "" {
		cfg.Address = DefaultAddress
	}
	if cfg.Namespace == "" {
		cfg.Namespace = DefaultNamespace
	}
	if cfg.Snapshotter == "" {
		cfg.Snapshotter = DefaultSnapshotter
	}
	if cfg.Runtime == "" {
		cfg.Runtime = DefaultRuntime
	}
	if cfg.PullTimeout <= 0 {
		cfg.PullTimeout = 5 * time.Minute
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 10 * time.Second
	}
	if cfg.ReconnectTimeout <= 0 {
		cfg.ReconnectTimeout = 5 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &Driver{cfg: cfg, log: cfg.Logger.With("driver", Name), ctx: ctx, cancel: cancel,
		tasks: map[string]*task{}, starting: map[string]bool{}, archives: map[archiveKey]string{}}
	// The connection is lazy: New fails only on bad options.
	d.client, d.clientErr = client.New(cfg.Address, client.WithDefaultNamespace(cfg.Namespace),
		client.WithDefaultRuntime(cfg.Runtime))
	return d
}

// Name implements driver.Driver.
func (d *Driver) Name() string { return Name }

// Shutdown stops the driver's watchers and closes its connection. Tasks
// keep running; pending WaitTask channels get driver.ErrShutdown. It is
// safe to call more than once.
func (d *Driver) Shutdown() {
	d.mu.Lock()
	wasClosed := d.closed
	d.closed = true
	d.mu.Unlock()
	d.cancel()
	d.wg.Wait()
	d.mu.Lock()
	for _, t := range d.tasks {
		for _, w := range t.waiters {
			w.Deliver(&driver.ExitResult{ExitCode: -1, Err: driver.ErrShutdown})
		}
		t.waiters = nil
	}
	d.mu.Unlock()
	if !wasClosed && d.client != nil {
		_ = d.client.Close()
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

// conn returns the client and a context in the driver's namespace.
func (d *Driver) conn(ctx context.Context) (context.Context, *client.Client, error) {
	if d.clientErr != nil {
		return ctx, nil, fmt.Errorf("%w: %s: %w", ErrUnavailable, d.cfg.Address, d.clientErr)
	}
	return namespaces.WithNamespace(ctx, d.cfg.Namespace), d.client, nil
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

// reserve marks id as starting; a known running or starting id is refused.
func (d *Driver) reserve(id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return driver.ErrShutdown
	}
	if t, ok := d.tasks[id]; (ok && !t.exited()) || d.starting[id] {
		return fmt.Errorf("%w: %s", driver.ErrTaskAlreadyStarted, id)
	}
	d.starting[id] = true
	return nil
}

func (d *Driver) release(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.starting, id)
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
	d.log.Debug("task exited", "task", t.id, "exit_code", r.ExitCode, "signal", r.Signal,
		"oom_killed", r.OOMKilled, "err", r.Err)
}

// forget drops t from the driver's tasks unless another run replaced it.
func (d *Driver) forget(t *task) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tasks[t.id] == t {
		delete(d.tasks, t.id)
	}
}
