package e2e

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/clustertest"
)

// troupeBin is the troupe binary built once for the package's tests.
var troupeBin string

func TestMain(m *testing.M) { os.Exit(clustertest.RunWithTroupe(m, &troupeBin)) }

// repoRoot is the module root (examples/ lives there).
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// devAgent is a `troupe agent -dev` process.
type devAgent struct {
	addr string
	cmd  *exec.Cmd
	log  *bytes.Buffer
}

func startDevAgent(t *testing.T) *devAgent {
	t.Helper()
	return startAgentProc(t, "-dev")
}

// startAgentProc runs `troupe agent` with args (and an HTTP address of
// its own) until the test ends.
func startAgentProc(t *testing.T, args ...string) *devAgent {
	t.Helper()
	addr := freeAddr(t)
	var log bytes.Buffer
	cmd := exec.Command(troupeBin, append([]string{"agent", "-http-addr", addr, "-log-level", "debug"}, args...)...)
	cmd.Stdout, cmd.Stderr = &log, &log
	require.NoError(t, cmd.Start())
	a := &devAgent{addr: addr, cmd: cmd, log: &log}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("agent log:\n%s", log.String())
		}
	})
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/v1/nodes")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return strings.Contains(b.String(), `"Status":"ready"`)
	}, 30*time.Second, 50*time.Millisecond, "agent never had a ready node")
	return a
}

// troupe runs the CLI against the agent and returns its output and exit code.
func (a *devAgent) troupe(t *testing.T, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, troupeBin, args...)
	cmd.Dir = repoRoot()
	cmd.Env = append(os.Environ(), "TROUPE_ADDR=http://"+a.addr)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("troupe %v: %v", args, err)
	}
	return string(out), code
}
