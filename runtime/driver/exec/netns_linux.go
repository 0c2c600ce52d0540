package exec

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// startInNetns calls start (an exec.Cmd's Start) with the calling thread
// in the network namespace at path, so that the child it forks is born
// there; the thread goes back to its own namespace afterwards. An empty
// path starts the child in the executor's namespace.
//
// A namespace belongs to a thread, not to a process: the goroutine stays
// locked to its thread from the setns until the thread is back where it
// was, and os/exec forks from the calling thread. A thread that cannot go
// back stays locked, so the Go runtime retires it when the goroutine ends
// instead of reusing it elsewhere.
func startInNetns(path string, start func() error) error {
	if path == "" {
		return start()
	}
	target, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNetns, err)
	}
	defer target.Close()
	runtime.LockOSThread()
	own, err := os.Open(fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid()))
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("%w: the executor's own namespace: %w", ErrNetns, err)
	}
	defer own.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("%w: joining %s: %w", ErrNetns, path, err)
	}
	err = start()
	if unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil {
		runtime.UnlockOSThread()
	} // else the thread stays locked, and dies with this goroutine
	return err
}
