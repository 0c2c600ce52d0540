package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// defaultExecTimeout bounds Host.Exec when ctx has no deadline.
const defaultExecTimeout = 30 * time.Second

// hostnameScript sets the UTS hostname to $0, then runs "$@".
const hostnameScript = `printf '%s' "$0" > /proc/sys/kernel/hostname && exec "$@"`

// Host is one member of a Cluster: a network namespace with address Addr on
// eth0, and Name as the hostname of every process started in it.
type Host struct {
	Name  string // hostname, "host0", "host1", ...
	NetNS string // network namespace name, e.g. "tt3fa2h0"
	Addr  string // IPv4 address on eth0, e.g. "10.213.7.10"
	Index int    // position in Cluster.Hosts

	c    *Cluster
	veth string // bridge-side end of the host's link

	mu          sync.Mutex
	partitioned bool
}

// Spec describes a command to run in a host.
type Spec struct {
	Path string   // program, looked up on PATH
	Args []string // arguments after Path
	Env  []string // KEY=VALUE added to the test process's environment
	Dir  string   // working directory; "" means the test's
}

// AddrPort returns "Addr:port".
func (h *Host) AddrPort(port int) string { return net.JoinHostPort(h.Addr, strconv.Itoa(port)) }

// Start runs cmd with args in the host, in the background. Its stdout and
// stderr go to Proc.LogPath. The cluster's cleanup kills it.
func (h *Host) Start(name, cmd string, args ...string) (*Proc, error) {
	return h.StartSpec(name, Spec{Path: cmd, Args: args})
}

// StartSpec is Start with an environment and working directory.
func (h *Host) StartSpec(name string, s Spec) (*Proc, error) {
	c := h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	path := c.logPathLocked(h.Name, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("clustertest: log of %s on %s: %w", name, h.Name, err)
	}
	defer func() { _ = f.Close() }() // the child holds its own copy
	cmd := h.command(context.Background(), s)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("clustertest: start %s on %s: %w", name, h.Name, err)
	}
	p := newProc(name, h, cmd, path)
	c.procs = append(c.procs, p)
	return p, nil
}

// Exec runs cmd with args in the host and returns its combined output. A
// failure or non-zero exit is an error wrapping ErrExec. Without a deadline
// on ctx it is bounded by 30 s. A command that leaves a background child
// must redirect the child's output, or Exec waits 1 s more for the pipe and
// reports exec.ErrWaitDelay.
func (h *Host) Exec(ctx context.Context, cmd string, args ...string) ([]byte, error) {
	return h.ExecSpec(ctx, Spec{Path: cmd, Args: args})
}

// ExecSpec is Exec with an environment and working directory.
func (h *Host) ExecSpec(ctx context.Context, s Spec) ([]byte, error) {
	if h.c.isClosed() {
		return nil, ErrClosed
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultExecTimeout)
		defer cancel()
	}
	cmd := h.command(ctx, s)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%w: %s on %s: %w: %s", ErrExec, s.Path, h.Name, err, bytes.TrimSpace(out))
	}
	return out, nil
}

// command builds nsenter --net=NS -- unshare --uts -- sh -c SCRIPT NAME PATH ARGS.
func (h *Host) command(ctx context.Context, s Spec) *exec.Cmd {
	args := []string{"--net=" + netnsPath(h.NetNS), "--", "unshare", "--uts", "--",
		"sh", "-c", hostnameScript, h.Name, s.Path}
	cmd := exec.CommandContext(ctx, "nsenter", append(args, s.Args...)...)
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.Dir = s.Dir
	cmd.SysProcAttr = sysProcAttr()
	return cmd
}

// Partition cuts the host's link (its veth on the bridge goes down): it can
// reach no other host and no other host can reach it. Idempotent.
func (h *Host) Partition() error { return h.setLink(true) }

// Heal restores the link cut by Partition. Idempotent.
func (h *Host) Heal() error { return h.setLink(false) }

// Partitioned reports whether the host is cut off.
func (h *Host) Partitioned() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.partitioned
}

func (h *Host) setLink(cut bool) error {
	if h.c.isClosed() {
		return ErrClosed
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	state := "up"
	if cut {
		state = "down"
	}
	if err := ipCmd(context.Background(), "link", "set", h.veth, state); err != nil {
		return err
	}
	h.partitioned = cut
	return nil
}
