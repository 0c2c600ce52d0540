//go:build linux

package qemu

import (
	"io"
	"log/slog"
	"os"
	"testing"

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
