package clustertest

import "syscall"

// sysProcAttr puts the child in its own process group (so Kill reaches its
// children) and kills it if the test process dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
