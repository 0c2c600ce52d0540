package agent

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver/exec"
	"github.com/troupe-dev/troupe/runtime/logmon"
)

// The test binary doubles as the exec driver's executor.
func TestMain(m *testing.M) {
	if os.Getenv("TROUPE_TEST_EXECUTOR") == "1" {
		os.Exit(exec.ExecutorMain(os.Args[1:]))
	}
	if len(os.Args) > 1 && os.Args[1] == logmon.Command { // a task's log forwarder (containerd, qemu)
		os.Exit(logmon.Main(os.Args[2:]))
	}
	code := m.Run()
	if hostpathBin != "" {
		_ = os.RemoveAll(filepath.Dir(hostpathBin))
	}
	os.Exit(code)
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
	isolateNetwork(cfg, dataDir)
	testCgroupParent(t, cfg)
	// A test's agent leaves no task, container or network behind; a test
	// that restarts an agent over running tasks uses crash().
	cfg.StopTasksOnShutdown = true
	return cfg
}

// crash stops an agent the way kill -9 leaves things: its tasks, containers
// and networks go on running, for the next agent on the same data dir.
func crash(t testing.TB, a *Agent) {
	t.Helper()
	a.cfg.StopTasksOnShutdown = false
	require.NoError(t, a.Shutdown())
}

// isolateNetwork keeps an agent off the host's containerd and gives its
// bridge network its own bridge, subnet,
// CNI network name, netns and IPAM directories, so tests (and test
// packages running at the same time) never share or collect each other's.
// The same data dir keeps the same network (an agent restart).
func isolateNetwork(cfg *Config, dataDir string) {
	h := fnv.New32a()
	h.Write([]byte(dataDir))
	n := int(h.Sum32() % 4000)
	cfg.BridgeName = fmt.Sprintf("tagt%d", n)
	cfg.CNINetwork = fmt.Sprintf("tagt%d", n)
	cfg.BridgeSubnet = fmt.Sprintf("10.%d.%d.0/24", 160+n/256, n%256)
	cfg.CNIStateDir = filepath.Join(dataDir, "cni")
	cfg.NetnsDir = filepath.Join(dataDir, "netns")
	// No shared containerd: a test that runs containers starts its own.
	cfg.ContainerdAddress = filepath.Join(dataDir, "no-containerd.sock")
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
