package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/clustertest"
	"github.com/troupe-dev/troupe/internal/syncbuf"
)

// cliExecJob holds ~40 MB in its shell, prints 50,000 numbered lines,
// waits for the test's ack file, then prints 150,000 more: 2.6 MB of
// stdout in logs of 1 MB files, so the follow crosses two rotations.
const cliExecJob = `job "usage" {
  group "g" {
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args = ["-c", <<EOS
x=$(head -c 40000000 /dev/zero | tr '\0' a)
seq -f 'line %07g' 0 49999
while [ ! -e "$NOMAD_ALLOC_DIR/data/ack" ]; do sleep 0.05; done
seq -f 'line %07g' 50000 199999
exec sleep 1000
EOS
        ]
      }
      logs {
        max_files     = 4
        max_file_size = 1
      }
      resources {
        cpu    = 100
        memory = 256
      }
    }
  }
}
`

// TestExecCLIStatsAndLogsFollow: against a real agent, `alloc status
// -stats` and `node status -stats` show an isolated exec task's memory
// (at least the 40 MB its shell holds), and `alloc logs -f` follows its
// stdout from the start across two rotations, every line once, in order.
func TestExecCLIStatsAndLogsFollow(t *testing.T) {
	clustertest.RequireRoot(t)
	dir := t.TempDir()
	jobFile := filepath.Join(dir, "usage.hcl")
	require.NoError(t, os.WriteFile(jobFile, []byte(cliExecJob), 0o644))
	data := filepath.Join(dir, "data")
	a := startAgentProc(t, "-server", "-client", "-data-dir", data)
	out, code := a.troupe(t, "job", "run", "-detach", jobFile)
	require.Equal(t, 0, code, out)

	var allocID string
	require.Eventually(t, func() bool {
		out, code := a.troupe(t, "job", "status", "usage")
		m := regexp.MustCompile(`(?m)^([0-9a-f]{8})\s+\S+\s+g\s+\d+\s+run\s+running`).FindStringSubmatch(out)
		if code != 0 || m == nil {
			return false
		}
		allocID = m[1]
		return true
	}, 60*time.Second, 100*time.Millisecond, "the allocation never ran")

	// The follow starts before the second batch is written.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, troupeBin, "alloc", "logs", "-f", allocID, "t")
	cmd.Env = append(os.Environ(), "TROUPE_ADDR=http://"+a.addr)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()

	statsSeen := false
	next := 0
	deadline := time.After(90 * time.Second)
	for next < 200_000 {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the follow ended at line %d: %s", next, stderr.String())
			require.Equal(t, fmt.Sprintf("line %07d", next), l, "every line once, in order")
			next++
		case <-deadline:
			st, _ := a.troupe(t, "alloc", "status", allocID)
			t.Fatalf("followed %d lines in 90s: %s\n%s", next, stderr.String(), st)
		}
		if next == 50_000 && !statsSeen {
			statsSeen = true
			checkCLIStats(t, a, allocID)
			ack := filepath.Join(data, "alloc")
			matches, err := filepath.Glob(filepath.Join(ack, allocID+"*", "alloc", "data"))
			require.NoError(t, err)
			require.Len(t, matches, 1, "the allocation's data dir under %s", ack)
			require.NoError(t, os.WriteFile(filepath.Join(matches[0], "ack"), nil, 0o644))
		}
	}
	rotated, err := filepath.Glob(filepath.Join(data, "alloc", allocID+"*", "alloc", "logs", "t.stdout.*"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(rotated), 3, "2.6 MB went into 1 MB files: %v", rotated)
}

// checkCLIStats reads the task's memory through both -stats commands.
func checkCLIStats(t *testing.T, a *devAgent, allocID string) {
	t.Helper()
	out, code := a.troupe(t, "alloc", "status", "-stats", allocID)
	require.Equal(t, 0, code, out)
	m := regexp.MustCompile(`(\d+\.\d) MiB\s+[\d.]+ MiB\s+[\d.]+ MiB`).FindStringSubmatch(out)
	require.NotNil(t, m, "a Memory Stats row:\n%s", out)
	rss, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	require.GreaterOrEqual(t, rss, 38.0, "the task's RSS holds its 40 MB:\n%s", out)

	out, code = a.troupe(t, "node", "status", "-self", "-stats")
	if code != 0 { // -self needs the agent to be the node's client
		nodes, _ := a.troupe(t, "node", "status")
		id := strings.Fields(strings.Split(strings.TrimSpace(nodes), "\n")[1])[0]
		out, code = a.troupe(t, "node", "status", "-stats", id)
	}
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "Host Resource Utilization")
	m = regexp.MustCompile(`Allocation Resource Utilization\n\S+\s+\S+\n\S+ MHz\s+(\d+)/\d+ MiB`).FindStringSubmatch(out)
	require.NotNil(t, m, "the allocations' memory row:\n%s", out)
	used, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	require.GreaterOrEqual(t, used, 38, "the node's allocations hold the task's 40 MB:\n%s", out)
}
