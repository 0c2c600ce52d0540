package clientsim

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the kernel's USER_HZ, the unit of /proc/PID/stat's CPU
// times (100 on every Linux ABI Go runs on).
const clockTick = 100

// ProcessCPU returns the user plus system CPU time the process pid has
// used so far, all its threads together (/proc/PID/stat utime + stime).
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count the fields after its closing one. utime and stime are fields
	// 14 and 15, so the 12th and 13th after it.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("%w: /proc/%d/stat: no command name", ErrProc, pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("%w: /proc/%d/stat: %d fields", ErrProc, pid, len(f))
	}
	var ticks uint64
	for _, v := range f[11:13] {
		t, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: /proc/%d/stat: %w", ErrProc, pid, err)
		}
		ticks += t
	}
	return time.Duration(ticks) * time.Second / clockTick, nil
}
