package exec

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// Name is the exec driver's name; RawName the name of the driver in raw
// mode (Config.Raw).
const (
	Name    = "exec"
	RawName = "raw_exec"
)

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
	// CgroupParent is the cgroup the tasks' groups go below; default
	// "/troupe" (v1) or "/troupe.slice" (v2). PidsLimit bounds each task's
	// processes; default cgroups.DefaultPidsLimit.
	CgroupParent string
	PidsLimit    int64
	Logger       *slog.Logger
	// ChrootEnv is the client's chroot_env for isolated tasks (host path
	// to path in the task's root); nil: DefaultChrootEnv.
	ChrootEnv map[string]string
	// UserDenylist are the users an isolated task may not run as (the
	// client's user.denylist); nil: DefaultUserDenylist, empty: none.
	UserDenylist []string
	// Raw makes this Nomad's raw_exec driver (named RawName): its tasks
	// run on the host's root as the agent's user, never isolated (a
	// task's Isolation is ignored), each still in a cgroup of its own and
	// under the executor shim.
	Raw bool
	// Disabled: the driver fingerprints as undetected and starts no task
	// (raw_exec is off unless the client enables it); it still recovers
	// the tasks it had.
	Disabled bool
	// CgroupsOf is a driver whose cgroup state (the held cores among it)
	// this one shares, so that exec, java and raw_exec tasks draw on one
	// core pool; nil: its own.
	CgroupsOf *Driver
}

var _ driver.Driver = (*Driver)(nil)

// Driver is the exec task driver. Create it with New; call Shutdown when
// done, which stops its watchers but leaves the tasks running.
type Driver struct {
	platform // empty on Linux; elsewhere driver.Unsupported, whose methods fail
	cfg      Config
	log      *slog.Logger
	tasks    *driver.Tasks[handleState]
}

// task is one task the driver knows; its Data is its handle state.
type task = driver.Task[handleState]

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
	d := &Driver{platform: newPlatform(), cfg: cfg}
	if cfg.CgroupsOf != nil {
		d.platform = cfg.CgroupsOf.platform
	}
	d.cfg.CgroupsOf = nil
	d.log = cfg.Logger.With("driver", d.Name())
	d.tasks = driver.NewTasks[handleState](d.log)
	return d
}

// Name implements driver.Driver: Name, or RawName in raw mode.
func (d *Driver) Name() string {
	if d.cfg.Raw {
		return RawName
	}
	return Name
}

// Shutdown stops the driver's watcher goroutines and waits for them. Tasks
// keep running; pending WaitTask channels get driver.ErrShutdown. It is
// safe to call more than once.
func (d *Driver) Shutdown() { d.tasks.Shutdown() }

// WaitTask implements driver.Driver.
func (d *Driver) WaitTask(ctx context.Context, taskID string) (<-chan *driver.ExitResult, error) {
	return d.tasks.Wait(ctx, taskID)
}

// watch has the driver watch t with wait, which reports when the watched
// process is gone (false: the driver shut down first); t's result is then
// read from its state directory. It returns false after Shutdown.
func (d *Driver) watch(t *task, wait func(ctx context.Context) bool) bool {
	stateDir := t.Data.StateDir
	return d.tasks.Watch(t, func(ctx context.Context) *driver.ExitResult {
		if !wait(ctx) {
			return nil
		}
		return readExit(stateDir)
	})
}
