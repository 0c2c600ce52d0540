package qemu

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// Name is the qemu driver's name.
const Name = "qemu"

// Config configures a Driver.
type Config struct {
	// Binary is the qemu program; default "qemu-system-x86_64" in PATH.
	Binary string
	// ImagePaths are host directories besides the allocation dir where an
	// absolute image_path may be (Nomad's image_paths plugin option).
	ImagePaths []string
	// StartTimeout bounds how long StartTask waits for qemu's pid file;
	// default 30s.
	StartTimeout time.Duration
	// LogmonPath is the binary run as a task's log forwarder (`LogmonPath
	// logmon <spec>`, runtime/logmon) when its logs rotate; default
	// os.Executable() (the troupe binary).
	LogmonPath string
	// CgroupParent is the cgroup the VMs' groups go below (the agent's
	// -cgroup-parent, shared with the exec drivers); PidsLimit bounds
	// each VM's processes (default cgroups.DefaultPidsLimit).
	CgroupParent string
	PidsLimit    int64
	Logger       *slog.Logger

	// logUnit is the bytes of one "MB" of a task's LogMaxFileSizeMB
	// (1 MiB; tests shrink it).
	logUnit int64
}

var _ driver.Driver = (*Driver)(nil)

// Driver is the qemu task driver. Create it with New; Shutdown stops its
// watchers and leaves the VMs running.
type Driver struct {
	platform // empty on Linux; elsewhere driver.Unsupported
	cfg      Config
	log      *slog.Logger
	tasks    *driver.Tasks[handleState]
	cg       *vmCgroups
}

// handleState is the driver's part of a task handle.
type handleState struct {
	// StateDir holds the shim's exit file and qemu's pid file.
	StateDir string
	// ShimPid runs qemu and writes its exit status.
	ShimPid        int
	ShimStartTicks uint64
	// Monitor is the QEMU monitor's unix socket.
	Monitor string
	// Graceful: stop powers the VM down through the monitor.
	Graceful bool
	// LogmonPid is the task's log forwarder (0: its logs do not rotate),
	// waited for after the VM ends so that its logs are complete.
	LogmonPid        int    `json:",omitempty"`
	LogmonStartTicks uint64 `json:",omitempty"`
	// Cgroup is the VM's group (shim and qemu); "" without cgroups.
	Cgroup string `json:",omitempty"`
}

type task = driver.Task[handleState]

// New returns a Driver with cfg's defaults filled in.
func New(cfg Config) *Driver {
	if cfg.Binary == "" {
		cfg.Binary = "qemu-system-x86_64"
	}
	cfg.ImagePaths = slices.Clone(cfg.ImagePaths)
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 30 * time.Second
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
	return &Driver{platform: newPlatform(), cfg: cfg, log: log, tasks: driver.NewTasks[handleState](log),
		cg: &vmCgroups{}}
}

// Name implements driver.Driver.
func (d *Driver) Name() string { return Name }

// Shutdown stops the driver's watchers; VMs keep running and pending
// WaitTask channels get driver.ErrShutdown.
func (d *Driver) Shutdown() { d.tasks.Shutdown() }

// WaitTask implements driver.Driver.
func (d *Driver) WaitTask(ctx context.Context, taskID string) (<-chan *driver.ExitResult, error) {
	return d.tasks.Wait(ctx, taskID)
}
