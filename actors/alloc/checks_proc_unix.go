//go:build unix

package alloc

import (
	"os/exec"
	"syscall"
	"time"
)

// ownGroup puts a script check's process in its own process group and
// kills the whole group at its timeout, so that a child it forked (sh
// running sleep) does not outlive it or hold its output open.
func ownGroup(p *exec.Cmd) {
	p.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.Cancel = func() error { return syscall.Kill(-p.Process.Pid, syscall.SIGKILL) }
	p.WaitDelay = time.Second
}
