//go:build !unix

package alloc

import (
	"os/exec"
	"time"
)

// ownGroup bounds the wait for a script check's output after its timeout.
func ownGroup(p *exec.Cmd) { p.WaitDelay = time.Second }
