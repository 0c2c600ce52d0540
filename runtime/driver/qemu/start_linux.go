package qemu

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/troupe-dev/troupe/runtime/cgroups"
	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/driver/exec"
	"github.com/troupe-dev/troupe/runtime/logrotate"
)

const (
	stateDirName = ".qemu"
	pidFileName  = "qemu.pid"
	exitFileName = "exit"
	monitorName  = "qemu-monitor.sock"
	// maxSocketPath is the longest unix socket path (sun_path less NUL).
	maxSocketPath = 107
	// shimScript waits for the driver's word on its stdin (it has been
	// moved into the VM's cgroup, so that qemu is born there), runs qemu
	// and writes its exit status (128+signal after a signal death, as sh
	// reports it) atomically to the state dir.
	shimScript = `d=$1; shift; read -r _ || :; "$@" </dev/null; echo $? > "$d/exit.tmp" && mv "$d/exit.tmp" "$d/exit"`
	pidPoll    = 20 * time.Millisecond
)

// StartTask implements driver.Driver: it starts qemu under its shim and
// returns once qemu has written its pid file.
func (d *Driver) StartTask(ctx context.Context, cfg *driver.TaskConfig) (*driver.TaskHandle, error) {
	spec, err := parseSpec(cfg.Config)
	if err != nil {
		return nil, err
	}
	if cfg.NetnsPath != "" {
		return nil, fmt.Errorf("%w: qemu: %s: the VM's ports are forwarded from the host: bridge networking is not supported",
			driver.ErrInvalidConfig, cfg.ID)
	}
	if spec.Accelerator == "kvm" && !kvmUsable() {
		return nil, fmt.Errorf("%w: %s", ErrNoKVM, cfg.ID)
	}
	image, err := resolveImage(spec.ImagePath, cfg.TaskDir, d.cfg.ImagePaths)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(image); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: qemu: image_path %q is not a file", driver.ErrInvalidConfig, spec.ImagePath)
	}
	stateDir := filepath.Join(cfg.TaskDir, stateDirName)
	layout := vmLayout{Image: image, Monitor: monitorPath(cfg),
		PidFile: filepath.Join(stateDir, pidFileName)}
	args, err := qemuArgs(cfg, spec, layout, hostMHz(), runtime.NumCPU())
	if err != nil {
		return nil, err
	}
	if err := d.tasks.Reserve(cfg.ID); err != nil {
		return nil, err
	}
	defer d.tasks.Release(cfg.ID)
	if err := freshStateDir(stateDir, layout.Monitor); err != nil {
		return nil, fmt.Errorf("qemu: %s: %w", cfg.ID, err)
	}
	logs, err := d.openLogs(cfg)
	if err != nil {
		return nil, fmt.Errorf("qemu: %s: logs: %w", cfg.ID, err)
	}
	group, err := d.createGroup(cfg, guestMemoryMB(cfg))
	if err != nil {
		logs.abort()
		return nil, err
	}
	dropGroup := func() {
		if group != nil {
			if err := group.Delete(); err != nil {
				d.log.Warn("removing the cgroup of a VM that did not start", "task", cfg.ID, "err", err)
			}
		}
	}
	cmd, err := d.startShim(cfg, stateDir, args, logs, group)
	if err != nil {
		logs.abort()
		dropGroup()
		return nil, fmt.Errorf("qemu: %s: starting qemu: %w", cfg.ID, err)
	}
	shimTicks, _ := exec.StartTicks(cmd.Process.Pid)
	st := handleState{StateDir: stateDir, ShimPid: cmd.Process.Pid,
		ShimStartTicks: shimTicks, Monitor: layout.Monitor, Graceful: spec.Graceful}
	if group != nil {
		st.Cgroup = group.Path()
	}
	logs.record(&st)
	t := driver.NewTask(cfg.ID, st)
	if !d.tasks.Watch(t, func(ctx context.Context) *driver.ExitResult {
		if !waitGone(ctx, cmd.Process.Pid, shimTicks) {
			return nil
		}
		_ = cmd.Wait()
		logs.reap(ctx, st)
		return readExit(stateDir)
	}) {
		_ = cmd.Process.Kill()
		dropGroup()
		return nil, driver.ErrShutdown
	}
	pid, ticks, err := d.awaitPid(ctx, t, layout.PidFile, layout.Monitor)
	if err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		dropGroup()
		return nil, fmt.Errorf("qemu: %s: %w%s", cfg.ID, err, stderrTail(cfg.StderrPath))
	}
	state, err := json.Marshal(t.Data)
	if err != nil {
		return nil, err
	}
	t.Handle = driver.TaskHandle{Driver: Name, TaskID: cfg.ID, Pid: pid, StartTicks: ticks,
		StartedAt: time.Now(), State: state}
	d.tasks.Add(t)
	d.log.Info("vm started", "task", cfg.ID, "pid", pid, "accelerator", spec.Accelerator)
	h := t.Handle
	return &h, nil
}

// monitorPath is the monitor socket in the task dir, or in the temp dir
// (named by a hash of the task id) when that path would be too long.
func monitorPath(cfg *driver.TaskConfig) string {
	p := filepath.Join(cfg.TaskDir, monitorName)
	if len(p) <= maxSocketPath {
		return p
	}
	sum := sha256.Sum256([]byte(cfg.TaskDir))
	return filepath.Join(os.TempDir(), "troupe-qemu-"+hex.EncodeToString(sum[:8])+".sock")
}

// freshStateDir drops a previous run's state dir and monitor socket.
func freshStateDir(dir, monitor string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.Remove(monitor); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.MkdirAll(dir, 0o700)
}

// startShim starts sh running qemu, in a session of its own so that
// signals to the agent's group do not reach it, and in group (when not
// nil) before it starts qemu; qemu's stdout and stderr go to logs
// (closed here once the shim has them).
func (d *Driver) startShim(cfg *driver.TaskConfig, stateDir string, args []string, logs *vmLogs,
	group cgroups.Group) (*osexec.Cmd, error) {
	defer logs.closeFiles()
	bin, err := osexec.LookPath(d.cfg.Binary)
	if err != nil {
		return nil, err
	}
	cmd := osexec.Command("/bin/sh", append([]string{"-c", shimScript, "troupe-qemu-shim", stateDir, bin}, args...)...)
	cmd.Dir = cfg.TaskDir
	cmd.Env = envList(cfg.Env)
	cmd.Stdout, cmd.Stderr = logs.stdout, logs.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	gate, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if group != nil {
		if err := group.AddProc(cmd.Process.Pid); err != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			return nil, fmt.Errorf("moving qemu's shim into %s: %w", group.Path(), err)
		}
	}
	_, err = gate.Write([]byte("go\n")) // a shim that died at once is seen by the watcher
	_ = gate.Close()
	if err != nil {
		d.log.Debug("the qemu shim did not take its start signal", "task", cfg.ID, "err", err)
	}
	return cmd, nil
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	if _, ok := env["PATH"]; !ok {
		out = append(out, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	}
	return out
}

// awaitPid polls for qemu's pid file and then its monitor's greeting
// until the deadline, the shim's exit or ctx's end. qemu writes the pid
// file and opens the socket before it handles SIGTERM; the monitor greets
// from the main loop, once qemu is up: a stop after that finds a monitor
// and a qemu that shuts down cleanly on its signal.
func (d *Driver) awaitPid(ctx context.Context, t *task, path, monitor string) (int, uint64, error) {
	deadline := time.NewTimer(d.cfg.StartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pidPoll)
	defer tick.Stop()
	for {
		if pid, err := readPid(path); err == nil && fileExists(monitor) && monitorGreets(ctx, monitor) {
			if ticks, err := exec.StartTicks(pid); err == nil {
				return pid, ticks, nil
			}
		}
		select {
		case <-tick.C:
		case <-t.Done():
			return 0, 0, fmt.Errorf("qemu exited at start (exit code %d)", t.Result().ExitCode)
		case <-deadline.C:
			return 0, 0, fmt.Errorf("%w after %s", ErrStartTimeout, d.cfg.StartTimeout)
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		}
	}
}

func readPid(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// readExit reads the shim's exit file: qemu's status, 128+signal after a
// signal death. Without one (the shim was killed) the result says so.
func readExit(stateDir string) *driver.ExitResult {
	b, err := os.ReadFile(filepath.Join(stateDir, exitFileName))
	if err != nil {
		return &driver.ExitResult{ExitCode: -1, Err: fmt.Errorf("qemu: exit status unknown: %w", err)}
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return &driver.ExitResult{ExitCode: -1, Err: fmt.Errorf("qemu: malformed exit file: %w", err)}
	}
	r := &driver.ExitResult{ExitCode: code}
	if code > 128 && code < 128+65 {
		r.Signal = code - 128
	}
	return r
}

// stderrTail is the end of qemu's stderr log (rotated or not), to
// explain a failed start.
func stderrTail(path string) string {
	r, err := logrotate.Open(path, true, 512)
	if err != nil {
		return ""
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil || len(b) == 0 {
		return ""
	}
	return ": " + strings.TrimSpace(string(b))
}

// hostMHz is the first core's clock from /proc/cpuinfo (0 when unknown).
func hostMHz() int {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "cpu MHz" {
			mhz, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int(mhz)
		}
	}
	return 0
}
