package qemu

import (
	"context"
	"time"

	"github.com/troupe-dev/troupe/runtime/driver/exec"
)

// pollInterval is how often a watcher looks at a process it did not start.
const pollInterval = 100 * time.Millisecond

// alive reports whether pid runs (not a zombie) and started at ticks.
func alive(pid int, ticks uint64) bool {
	if pid <= 0 {
		return false
	}
	state, st, err := exec.ProcStat(pid)
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
