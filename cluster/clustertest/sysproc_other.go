//go:build !linux

package clustertest

import "syscall"

// sysProcAttr puts the child in its own process group (so Kill reaches its
// children). The harness only runs on Linux; this keeps the package building.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
