//go:build linux

package qemu

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/troupe-dev/troupe/runtime/cgroups"
	"github.com/troupe-dev/troupe/runtime/logmon"
)

// The test binary doubles as the tasks' log forwarder.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == logmon.Command {
		os.Exit(logmon.Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}

func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

var cgroupParents sync.Map // test name -> its cgroup parent

// cgroupParent is a cgroup parent of the test's own (the same for every
// driver of the test: a restarted one finds its VMs' groups), removed
// with whatever is left in it when the test ends.
func cgroupParent(t *testing.T) string {
	p := fmt.Sprintf("/troupe-test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_"))
	if _, loaded := cgroupParents.LoadOrStore(t.Name(), p); !loaded {
		t.Cleanup(func() {
			if m, err := cgroups.New(p); err == nil {
				if err := m.RemoveParent(); err != nil {
					t.Errorf("removing the test's cgroup parent %s: %v", p, err)
				}
			}
		})
	}
	return p
}
