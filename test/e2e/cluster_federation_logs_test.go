package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/clustertest"
	"github.com/troupe-dev/troupe/internal/syncbuf"
)

// tickJob is a job for region west whose task writes "tick N" every
// 300 ms.
const tickJob = `job "ticker" {
  region = "west"
  datacenters = ["dc1"]
  type = "service"

  group "tick" {
    task "tick" {
      driver = "exec"

      config {
        command = "/bin/sh"
        args = ["-c", "i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.3; done"]
      }

      resources {
        cpu = 50
        memory = 32
      }
    }
  }
}
`

// keepaliveBound is how long a followed stream may outlive the WAN cut:
// the tunnel's keepalive timeout (15 s) and interval (5 s), with slack.
const keepaliveBound = 40 * time.Second

// TestClusterFederationLogsFollow: `troupe alloc logs -region west -f`
// against east's server follows a task of west's client, the lines it
// writes after the follow started showing as it writes them; when the WAN link is cut the follow ends
// with an error naming west within the tunnel's keepalive bound (not
// hung). Also measures the forwarding overhead of a read, and reads the
// allocation's files and the actor trees through east
// (checkFSAndActorsThroughEast). One server per
// region and west's client: hosts 0 (east) and 4, 5 (west), as cutWAN
// splits them.
func TestClusterFederationLogsFollow(t *testing.T) {
	dataRoot := t.TempDir()
	c := clustertest.New(t, 8, logDirOption(t)...)
	hosts := c.Hosts()
	server := []string{"agent", "-server", "-bootstrap-expect", "1"}
	f := &federation{c: c, east: &testCluster{c: c}, west: &testCluster{c: c}}
	east := startAgent(t, hosts[0], "east-server0", dataRoot, append(server, "-region", "east"))
	west := startAgent(t, hosts[4], "west-server0", dataRoot, append(server, "-region", "west", "-retry-join", hosts[0].Addr))
	westClient := startAgent(t, hosts[5], "west-client0", dataRoot,
		[]string{"agent", "-client", "-region", "west", "-servers", hosts[4].Addr})
	f.east.servers = []*agentProc{east}
	f.west.servers, f.west.clients = []*agentProc{west}, []*agentProc{westClient}
	f.east.eventually(t, formTimeout, "east formed", func() (bool, string) { return f.east.formed(0) })
	f.west.eventually(t, formTimeout, "west formed", func() (bool, string) { return f.west.formed(1) })
	f.east.eventually(t, formTimeout, "east knows west", func() (bool, string) {
		regions, err := east.API.Regions().List()
		return err == nil && len(regions) == 2, fmt.Sprint(regions, err)
	})

	path := filepath.Join(t.TempDir(), "ticker.hcl")
	require.NoError(t, os.WriteFile(path, []byte(tickJob), 0o644))
	out, code := f.east.cli(t, east, "job run", "-detach", path)
	require.Equal(t, 0, code, out)
	allocs := f.west.waitRunning(t, "ticker", 1, settleTimeout, onEachNode(f.west.nodeIDs(t)["west-client0"]))

	measureForwarding(t, east, west, "ticker")
	checkFSAndActorsThroughEast(t, east, west, allocs[0].ID, allocs[0].NodeID, "tick")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, troupeBin, "alloc", "logs", "-address", east.HTTPAddr(), "-region", "west", "-tail", "-n", "1", "-f", allocs[0].ID)
	var stderr syncbuf.Buffer // written by exec's copier while the test reads it
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	// From the last line there when the follow started (-tail -n 1), the
	// lines written since keep coming, in order.
	first, last := -1, -1
	deadline := time.After(settleTimeout)
	for first < 0 || last < first+5 {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the follow ended: %s", stderr.String())
			n, err := strconv.Atoi(strings.TrimPrefix(l, "tick "))
			require.NoError(t, err, "line %q", l)
			if first < 0 {
				first = n
			} else {
				require.Equal(t, last+1, n, "lines out of order")
			}
			last = n
		case <-deadline:
			t.Fatalf("the follow through east showed %d..%d: %s", first, last, stderr.String())
		}
	}
	t.Logf("followed ticks %d..%d of west's task through east", first, last)
	exited := make(chan error, 1)
	go func() {
		for range lines { // the follow's output from here on
		}
		exited <- cmd.Wait()
	}()

	// The WAN link cut: the follow ends, with an error naming west.
	f.cutWAN(t, false)
	defer f.cutWAN(t, true)
	cut := time.Now()
	select {
	case err := <-exited:
		took := time.Since(cut)
		t.Logf("the follow ended %s after the WAN cut: %v: %s", took.Round(time.Millisecond), err, strings.TrimSpace(stderr.String()))
		require.Error(t, err, "the follow exited 0 at the cut")
		require.Contains(t, stderr.String(), `region "west"`)
	case <-time.After(keepaliveBound):
		t.Fatalf("the follow still runs %s after the WAN cut: %s", keepaliveBound, stderr.String())
	}
}
