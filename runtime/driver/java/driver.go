package java

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// Name is the java driver's name.
const Name = "java"

// Config configures a Driver.
type Config struct {
	// JavaHome is the JVM's home: its java is JavaHome/bin/java. Empty:
	// "java" on PATH.
	JavaHome string
	// ChrootEnv is the client's chroot_env (host path to path in an
	// isolated task's root); nil: exec.DefaultChrootEnv. A JVM outside it
	// is bound into the task's root, read-only.
	ChrootEnv map[string]string
	Logger    *slog.Logger
}

var (
	_ driver.Driver = (*Driver)(nil)
	_ driver.Execer = (*Driver)(nil)
)

// Driver is the java task driver. It runs its tasks through the driver
// it wraps (New); Shutdown shuts that one down too.
type Driver struct {
	cfg   Config
	log   *slog.Logger
	inner driver.Driver
}

// New returns a java driver that runs its tasks through inner, a driver
// that reads "command" and "args" from its task config (the exec
// driver). inner must be the java driver's own: the java driver shuts it
// down.
func New(cfg Config, inner driver.Driver) *Driver {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Driver{cfg: cfg, log: cfg.Logger.With("driver", Name), inner: inner}
}

// Name implements driver.Driver.
func (d *Driver) Name() string { return Name }

// Shutdown shuts the wrapped driver down (its tasks keep running).
func (d *Driver) Shutdown() {
	if s, ok := d.inner.(interface{ Shutdown() }); ok {
		s.Shutdown()
	}
}

// StartTask implements driver.Driver: it checks the task's java config,
// finds the JVM and starts the command line through the wrapped driver.
func (d *Driver) StartTask(ctx context.Context, cfg *driver.TaskConfig) (*driver.TaskHandle, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%w: java: no task config", driver.ErrInvalidConfig)
	}
	inner, err := d.innerConfig(cfg)
	if err != nil {
		return nil, err
	}
	h, err := d.inner.StartTask(ctx, inner)
	if err != nil {
		return nil, err
	}
	d.log.Info("java task started", "task", cfg.ID, "pid", h.Pid, "args", inner.Config["args"])
	out := *h
	out.Driver = Name
	return &out, nil
}

// innerConfig is cfg as the wrapped driver runs it: the same task, whose
// config is the java command line.
func (d *Driver) innerConfig(cfg *driver.TaskConfig) (*driver.TaskConfig, error) {
	spec, err := parseSpec(cfg.Config)
	if err != nil {
		return nil, fmt.Errorf("%w (task %s)", err, cfg.ID)
	}
	if spec.JarPath != "" && !filepath.IsAbs(spec.JarPath) && cfg.TaskDir != "" {
		if _, err := os.Stat(filepath.Join(cfg.TaskDir, spec.JarPath)); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: java: %s: jar_path %q is not in the task dir", driver.ErrInvalidConfig, cfg.ID, spec.JarPath)
		}
	}
	bin, err := d.binary()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, cfg.ID)
	}
	inner := *cfg
	if cfg.Isolation != nil {
		if bin, inner.Isolation, err = d.isolate(cfg, spec, bin); err != nil {
			return nil, err
		}
	}
	inner.Config = map[string]any{"command": bin, "args": spec.arguments()}
	return &inner, nil
}

// RecoverTask implements driver.Driver: the wrapped driver re-attaches
// to the task.
func (d *Driver) RecoverTask(ctx context.Context, h *driver.TaskHandle) error {
	if h == nil || h.Driver != Name {
		return fmt.Errorf("%w: not a %s handle", driver.ErrInvalidHandle, Name)
	}
	inner := *h
	inner.Driver = d.inner.Name()
	return d.inner.RecoverTask(ctx, &inner)
}

// WaitTask implements driver.Driver.
func (d *Driver) WaitTask(ctx context.Context, taskID string) (<-chan *driver.ExitResult, error) {
	return d.inner.WaitTask(ctx, taskID)
}

// StopTask implements driver.Driver.
func (d *Driver) StopTask(ctx context.Context, taskID string, timeout time.Duration, signal string) error {
	return d.inner.StopTask(ctx, taskID, timeout, signal)
}

// DestroyTask implements driver.Driver.
func (d *Driver) DestroyTask(ctx context.Context, taskID string, force bool) error {
	return d.inner.DestroyTask(ctx, taskID, force)
}

// SignalTask implements driver.Driver.
func (d *Driver) SignalTask(ctx context.Context, taskID string, signal string) error {
	return d.inner.SignalTask(ctx, taskID, signal)
}

// ExecTask implements driver.Execer through the wrapped driver; one that
// is no Execer answers driver.ErrExecNotSupported.
func (d *Driver) ExecTask(ctx context.Context, taskID string, opts *driver.ExecOptions) (int, error) {
	return driver.ExecIn(ctx, d.inner, taskID, opts)
}
