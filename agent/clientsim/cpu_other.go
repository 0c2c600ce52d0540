//go:build !linux

package clientsim

import (
	"fmt"
	"time"
)

// ProcessCPU is only implemented on Linux (it reads /proc).
func ProcessCPU(pid int) (time.Duration, error) {
	return 0, fmt.Errorf("%w: process CPU time needs /proc (Linux)", ErrProc)
}
