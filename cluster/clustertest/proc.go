package clustertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// stopWait bounds how long teardown waits for killed processes to exit.
const stopWait = 5 * time.Second

// logTail is how much of each log a failed test prints.
const logTail = 64 << 10

// Proc is a process started in a host with Host.Start.
type Proc struct {
	Name string
	Host *Host

	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // result of cmd.Wait, set before done is closed
}

func newProc(name string, h *Host, cmd *exec.Cmd, logPath string) *Proc {
	p := &Proc{Name: name, Host: h, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p
}

// Pid returns the process id (in the root pid namespace).
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// LogPath returns the file holding the process's stdout and stderr.
func (p *Proc) LogPath() string { return p.logPath }

// Log returns the process's output so far.
func (p *Proc) Log() (string, error) {
	b, err := os.ReadFile(p.logPath)
	return string(b), err
}

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Kill sends SIGKILL to the process and its process group. It does not
// wait; call Wait for that.
func (p *Proc) Kill() error {
	err := syscall.Kill(-p.Pid(), syscall.SIGKILL)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("clustertest: kill %s on %s: %w", p.Name, p.Host.Name, err)
	}
	return nil
}

// Signal sends sig to the process (not its group). It returns ErrExited
// when the process has already exited.
func (p *Proc) Signal(sig os.Signal) error {
	if p.Exited() {
		return fmt.Errorf("%w: %s on %s", ErrExited, p.Name, p.Host.Name)
	}
	err := p.cmd.Process.Signal(sig)
	if errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("%w: %s on %s", ErrExited, p.Name, p.Host.Name)
	}
	return err
}

// Wait waits up to timeout for the process to exit and returns its exit
// error (nil for status 0, an *exec.ExitError otherwise), or an error
// wrapping ErrTimeout.
func (p *Proc) Wait(timeout time.Duration) error {
	if p.Exited() {
		return p.err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
		return p.err
	case <-t.C:
		return fmt.Errorf("%w: %s on %s still running after %s", ErrTimeout, p.Name, p.Host.Name, timeout)
	}
}

// ExitCode returns the exit status, or -1 while running or when killed by a
// signal.
func (p *Proc) ExitCode() int {
	if !p.Exited() {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// Stop sends SIGTERM, waits up to grace, then kills the process group.
// It returns the exit error of the process, or ErrTimeout if even SIGKILL
// did not end it.
func (p *Proc) Stop(grace time.Duration) error {
	if err := p.Signal(syscall.SIGTERM); errors.Is(err, ErrExited) {
		return p.err
	}
	err := p.Wait(grace)
	if !errors.Is(err, ErrTimeout) {
		return err
	}
	if err := p.Kill(); err != nil {
		return err
	}
	return p.Wait(stopWait)
}

// logPathLocked returns an unused log file path for proc name on host.
// c.mu must be held.
func (c *Cluster) logPathLocked(host, name string) string {
	base := host + "-" + sanitize(name)
	file := base + ".log"
	for i := 2; c.logs[file]; i++ {
		file = fmt.Sprintf("%s-%d.log", base, i)
	}
	c.logs[file] = true
	return filepath.Join(c.logDir, file)
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, s)
}

func (c *Cluster) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// stopAll kills every started process and everything else inside the
// hosts' namespaces, then waits (bounded) for the started ones to exit.
func (c *Cluster) stopAll(ctx context.Context) error {
	c.mu.Lock()
	procs := append([]*Proc(nil), c.procs...)
	c.mu.Unlock()
	var errs []error
	for _, p := range procs {
		errs = append(errs, p.Kill())
	}
	for _, h := range c.hosts {
		if _, err := os.Stat(netnsPath(h.NetNS)); err == nil {
			errs = append(errs, killNetnsPids(ctx, h.NetNS))
		}
	}
	deadline := time.Now().Add(stopWait)
	for _, p := range procs {
		if err := p.Wait(time.Until(deadline)); errors.Is(err, ErrTimeout) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// dumpLogs prints the tail of every process log with t.Log.
func (c *Cluster) dumpLogs() {
	c.mu.Lock()
	procs := append([]*Proc(nil), c.procs...)
	c.mu.Unlock()
	for _, p := range procs {
		b, err := os.ReadFile(p.logPath)
		if err != nil {
			c.t.Logf("clustertest: log of %s on %s: %v", p.Name, p.Host.Name, err)
			continue
		}
		if len(b) > logTail {
			b = append([]byte("...(truncated)...\n"), b[len(b)-logTail:]...)
		}
		c.t.Logf("clustertest: ---- %s on %s (%s, pid %d, %s) ----\n%s",
			p.Name, p.Host.Name, p.Host.Addr, p.Pid(), p.logPath, b)
	}
}
