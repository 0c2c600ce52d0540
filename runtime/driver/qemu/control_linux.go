package qemu

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// platform is empty on Linux, where the Driver has its own host methods.
type platform struct{}

func newPlatform() platform { return platform{} }

// monitorTimeout bounds one monitor conversation.
const monitorTimeout = 5 * time.Second

// processes is how the shared Tasks table reaches a VM.
type processes struct{ d *Driver }

var _ driver.Processes[handleState] = processes{}

// Stop powers a graceful task's VM down through the monitor; otherwise,
// or when the monitor does not answer, it sends sig to qemu.
func (p processes) Stop(ctx context.Context, t *task, sig syscall.Signal) error {
	if t.Data.Graceful {
		err := monitorCommand(ctx, t.Data.Monitor, "system_powerdown")
		if err == nil {
			p.d.log.Info("vm powering down", "task", t.ID)
			return nil
		}
		p.d.log.Warn("monitor unreachable, signalling qemu", "task", t.ID, "error", err)
	}
	return p.Signal(ctx, t, sig)
}

// Signal sends sig to qemu (checked against its start time).
func (p processes) Signal(_ context.Context, t *task, sig syscall.Signal) error {
	if !alive(t.Handle.Pid, t.Handle.StartTicks) {
		return nil
	}
	if err := syscall.Kill(t.Handle.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("qemu: %s: signal %s: %w", t.ID, sig, err)
	}
	return nil
}

// shimGrace bounds how long Kill waits for the shim to record qemu's death.
const shimGrace = 5 * time.Second

// Kill SIGKILLs qemu; the shim then records the death and exits.
func (p processes) Kill(ctx context.Context, t *task) error {
	if err := p.Signal(ctx, t, syscall.SIGKILL); err != nil {
		return err
	}
	// The shim reaps qemu and writes the exit file, then exits: give it
	// shimGrace for that. Only one that lingers past it (stopped?) has its
	// session killed; killing it at once lost the exit status.
	wctx, cancel := context.WithTimeout(ctx, shimGrace)
	defer cancel()
	if waitGone(wctx, t.Handle.Pid, t.Handle.StartTicks) && !waitGone(wctx, t.Data.ShimPid, t.Data.ShimStartTicks) {
		_ = syscall.Kill(-t.Data.ShimPid, syscall.SIGKILL)
	}
	// Through the VM's cgroup, whatever else runs there dies too (a
	// helper qemu started, a shim that left its session).
	if err := p.d.killGroup(t); err != nil {
		return fmt.Errorf("qemu: %s: killing its cgroup: %w", t.ID, err)
	}
	return nil
}

// StopTask implements driver.Driver.
func (d *Driver) StopTask(ctx context.Context, taskID string, timeout time.Duration, signal string) error {
	return d.tasks.Stop(ctx, taskID, timeout, signal, processes{d})
}

// SignalTask implements driver.Driver.
func (d *Driver) SignalTask(ctx context.Context, taskID string, signal string) error {
	return d.tasks.Signal(ctx, taskID, signal, processes{d})
}

// DestroyTask implements driver.Driver: it removes the task's cgroup
// (killing what is left in it), state dir and monitor socket and forgets
// it.
func (d *Driver) DestroyTask(ctx context.Context, taskID string, force bool) error {
	t, err := d.tasks.Halt(ctx, taskID, force, processes{d})
	if err != nil {
		return err
	}
	if err := d.removeGroup(t); err != nil {
		return fmt.Errorf("qemu: %s: %w", taskID, err)
	}
	if err := os.RemoveAll(t.Data.StateDir); err != nil {
		return fmt.Errorf("qemu: %s: %w", taskID, err)
	}
	if err := os.Remove(t.Data.Monitor); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("qemu: %s: %w", taskID, err)
	}
	d.tasks.Remove(t)
	return nil
}

// monitorCommand sends one command to the human monitor at path after its
// greeting and waits for the next prompt (the command was taken).
func monitorCommand(ctx context.Context, path, command string) error {
	ctx, cancel := context.WithTimeout(ctx, monitorTimeout)
	defer cancel()
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "unix", path)
	if err != nil {
		return err
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	if err := readPrompt(conn); err != nil {
		return fmt.Errorf("qemu monitor greeting: %w", err)
	}
	if _, err := conn.Write([]byte(command + "\n")); err != nil {
		return err
	}
	if err := readPrompt(conn); err != nil {
		return fmt.Errorf("qemu monitor %s: %w", command, err)
	}
	return nil
}

// monitorGreets reports whether the monitor at path answers with its
// prompt (within a second).
func monitorGreets(ctx context.Context, path string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "unix", path)
	if err != nil {
		return false
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	return readPrompt(conn) == nil
}

// readPrompt reads until the monitor's "(qemu) " prompt.
func readPrompt(conn net.Conn) error {
	var seen strings.Builder
	buf := make([]byte, 1024)
	for !strings.HasSuffix(strings.TrimRight(seen.String(), " "), "(qemu)") {
		n, err := conn.Read(buf)
		if err != nil {
			return err
		}
		seen.Write(buf[:n])
		if seen.Len() > 64<<10 {
			return errors.New("no prompt")
		}
	}
	return nil
}
