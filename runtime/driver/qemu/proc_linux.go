package qemu

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"time"
)

// pollInterval is how often a watcher looks at a process it did not start.
const pollInterval = 100 * time.Millisecond

// procStat reads a process's state letter and start time (field 22 of
// /proc/<pid>/stat).
func procStat(pid int) (state byte, startTicks uint64, err error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("qemu: malformed /proc/%d/stat", pid)
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 20 || len(fields[0]) != 1 {
		return 0, 0, fmt.Errorf("qemu: malformed /proc/%d/stat", pid)
	}
	startTicks, err = strconv.ParseUint(string(fields[19]), 10, 64)
	return fields[0][0], startTicks, err
}

// alive reports whether pid runs (not a zombie) and started at ticks.
func alive(pid int, ticks uint64) bool {
	if pid <= 0 {
		return false
	}
	state, st, err := procStat(pid)
	if err != nil || state == 'Z' || state == 'X' || state == 'x' {
		return false
	}
	return st == ticks
}

// waitGone polls until pid (started at ticks) is gone or a zombie; false
// when ctx ended first.
func waitGone(ctx context.Context, pid int, ticks uint64) bool {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for alive(pid, ticks) {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return true
}
