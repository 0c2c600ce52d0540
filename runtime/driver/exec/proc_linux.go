package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// procPollInterval is how often the /proc fallback looks at a process.
const procPollInterval = 200 * time.Millisecond

// ProcStat reads a process's state letter and start time (field 22 of
// /proc/<pid>/stat, in clock ticks since boot): with the pid, the start
// time names a process for good (the qemu driver's watch uses it too).
func ProcStat(pid int) (state byte, startTicks uint64, err error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	// The command name (field 2) may hold spaces and parens: split after
	// its last ')'. Field 3 (state) is then fields[0], field 22 fields[19].
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("exec: malformed /proc/%d/stat", pid)
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 20 || len(fields[0]) != 1 {
		return 0, 0, fmt.Errorf("exec: malformed /proc/%d/stat", pid)
	}
	startTicks, err = strconv.ParseUint(string(fields[19]), 10, 64)
	return fields[0][0], startTicks, err
}

// StartTicks is ProcStat's start time alone.
func StartTicks(pid int) (uint64, error) {
	_, ticks, err := ProcStat(pid)
	return ticks, err
}

// alive reports whether pid runs and is not a zombie; with ticks != 0 it
// must also have started at ticks (else the pid was reused).
func alive(pid int, ticks uint64) bool {
	if pid <= 0 {
		return false
	}
	state, st, err := ProcStat(pid)
	if err != nil || state == 'Z' || state == 'X' || state == 'x' {
		return false
	}
	return ticks == 0 || st == ticks
}

// waitExit blocks until the process pid (started at ticks; 0: any) has
// exited, using a pidfd, else polling /proc. It returns false when ctx
// ended first.
func waitExit(ctx context.Context, pid int, ticks uint64) bool {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if errors.Is(err, unix.ESRCH) {
		return true
	}
	if err == nil {
		// The pidfd pins the process it was opened on: if that is still
		// ours now, it stays ours.
		if !alive(pid, ticks) {
			unix.Close(fd)
			return true
		}
		if exited, err := waitPidfd(ctx, fd); err == nil {
			return exited
		}
	}
	return pollProc(ctx, pid, ticks)
}

// waitPidfd waits for a pidfd to become readable (its process exited)
// through the runtime's poller; closing the file on ctx's end wakes it. It
// closes fd. An error means the poller cannot watch pidfds.
func waitPidfd(ctx context.Context, fd int) (bool, error) {
	f := os.NewFile(uintptr(fd), "pidfd")
	closed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		f.Close()
		close(closed)
	})
	defer func() {
		if stop() {
			f.Close()
		} else {
			<-closed
		}
	}()
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	exited := false
	err = rc.Read(func(fd uintptr) bool {
		exited = pidfdReadable(int(fd))
		return exited
	})
	if exited {
		return true, nil
	}
	if ctx.Err() != nil {
		return false, nil
	}
	return false, err
}

// pidfdReadable polls a pidfd without blocking.
func pidfdReadable(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n > 0
	}
}

// pollProc looks at /proc on a ticker until the process is gone.
func pollProc(ctx context.Context, pid int, ticks uint64) bool {
	tick := time.NewTicker(procPollInterval)
	defer tick.Stop()
	for alive(pid, ticks) {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}
