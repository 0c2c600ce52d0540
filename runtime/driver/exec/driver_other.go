//go:build !linux

package exec

import (
	"fmt"
	"os"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// platform gives the Driver its host methods off Linux: Fingerprint says
// exec needs Linux, and StartTask, RecoverTask, StopTask, DestroyTask and
// SignalTask fail with driver.ErrNotSupported.
type platform = driver.Unsupported

func newPlatform() platform { return driver.Unsupported{Driver: Name} }

// ExecutorMain is the executor's entry point; off Linux it only fails.
func ExecutorMain([]string) int {
	fmt.Fprintf(os.Stderr, "executor: %v\n", driver.ErrNotSupported)
	return 1
}
