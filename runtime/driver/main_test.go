package driver

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: Tasks owns
// watcher goroutines that Shutdown must stop.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
