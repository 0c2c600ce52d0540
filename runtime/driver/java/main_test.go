package java

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/troupe-dev/troupe/runtime/driver/exec"
)

// envExecutor turns the test binary into the exec driver's executor.
const envExecutor = "TROUPE_TEST_EXECUTOR"

func TestMain(m *testing.M) {
	if os.Getenv(envExecutor) == "1" {
		os.Exit(exec.ExecutorMain(os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}
