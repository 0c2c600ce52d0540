package agent

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver/exec"
)

// The test binary doubles as the exec driver's executor.
func TestMain(m *testing.M) {
	if os.Getenv("TROUPE_TEST_EXECUTOR") == "1" {
		os.Exit(exec.ExecutorMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// testConfig is a single-server, single-client agent on a free port.
func testConfig(t testing.TB, dataDir string) *Config {
	cfg := DefaultConfig()
	cfg.DataDir = dataDir
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.NodeName = "test-node"
	cfg.ExecutorPath = os.Args[0]
	cfg.ExecutorEnv = []string{"TROUPE_TEST_EXECUTOR=1"}
	cfg.ClientBatch = 10 * time.Millisecond
	cfg.Logger = testLogger(t)
	return cfg
}

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// startAgent starts an agent and waits until its node is ready.
func startAgent(t testing.TB, cfg *Config) *Agent {
	t.Helper()
	a, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, a.Start())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, a.WaitLeader(ctx))
	require.Eventually(t, func() bool {
		n := a.Store().Snapshot().NodeByID(a.Node().GetID())
		return n != nil && n.GetStatus() == "ready"
	}, 20*time.Second, 10*time.Millisecond, "node never became ready")
	return a
}
