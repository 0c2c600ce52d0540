package containerd

import (
	"context"
	"fmt"
	"log/slog"
	"os"
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
	// LogmonPath is the binary the shim runs as a task's log forwarder
	// (`LogmonPath logmon <spec>`, runtime/logmon) when the task's logs
	// rotate; default os.Executable() (the troupe binary).
	LogmonPath string
	Logger     *slog.Logger

	// logUnit is the bytes of one "MB" of a task's LogMaxFileSizeMB
	// (1 MiB; tests shrink it to rotate small logs).
	logUnit int64
}

var (
	_ driver.Driver = (*Driver)(nil)
	_ driver.Execer = (*Driver)(nil)
)

// Driver is the containerd task driver. Create it with New; call Shutdown
// when done, which stops its watchers and leaves the containers running.
type Driver struct {
	platform  // empty on Linux; elsewhere driver.Unsupported, whose methods fail
	cfg       Config
	log       *slog.Logger
	client    *client.Client
	clientErr error
	tasks     *driver.Tasks[taskData]
	importMu  sync.Mutex // serialises archive imports

	mu       sync.Mutex
	archives map[archiveKey]string // imported archive -> image name; guarded by mu
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
	if cfg.LogmonPath == "" {
		cfg.LogmonPath, _ = os.Executable()
	}
	if cfg.logUnit <= 0 {
		cfg.logUnit = 1 << 20
	}
	log := cfg.Logger.With("driver", Name)
	d := &Driver{platform: newPlatform(), cfg: cfg, log: log, tasks: driver.NewTasks[taskData](log),
		archives: map[archiveKey]string{}}
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
	if d.tasks.Shutdown() && d.client != nil {
		_ = d.client.Close()
	}
}

// WaitTask implements driver.Driver.
func (d *Driver) WaitTask(ctx context.Context, taskID string) (<-chan *driver.ExitResult, error) {
	return d.tasks.Wait(ctx, taskID)
}

// conn returns the client and a context in the driver's namespace.
func (d *Driver) conn(ctx context.Context) (context.Context, *client.Client, error) {
	if d.clientErr != nil {
		return ctx, nil, fmt.Errorf("%w: %s: %w", ErrUnavailable, d.cfg.Address, d.clientErr)
	}
	return namespaces.WithNamespace(ctx, d.cfg.Namespace), d.client, nil
}
