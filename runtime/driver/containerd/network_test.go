//go:build linux

package containerd

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNetworkModes checks which network namespace a task is in, and the
// devices it sees there: the host's namespace by default, a private one
// with only loopback for network_mode "none", and exactly the one that
// netns_path names.
func TestNetworkModes(t *testing.T) {
	e := setupEnv(t)
	netns := newNetns(t)
	hostNS, err := os.Readlink("/proc/self/ns/net")
	require.NoError(t, err)
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(netns, &st))
	givenNS := fmt.Sprintf("net:[%d]", st.Ino)
	tests := []struct {
		name     string
		key, val string
		wantNS   string // "" means neither the host's nor the given one
		wantDevs string // "" means any
	}{
		{name: "host by default", wantNS: hostNS},
		{name: "none", key: "network_mode", val: NetworkNone, wantDevs: "lo"},
		{name: "netns_path", key: "netns_path", val: netns, wantNS: givenNS, wantDevs: "lo tv0 tv1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := e.newDriver(t)
			cfg := e.taskConfig(t, "readlink /proc/self/ns/net; echo $(ls /sys/class/net)")
			if tt.key != "" {
				cfg.Config[tt.key] = tt.val
			}
			e.start(t, d, cfg)
			require.True(t, result(t, d, cfg.ID).Successful(), readFile(t, cfg.StderrPath))
			var ns, devs string
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				data, err := os.ReadFile(cfg.StdoutPath)
				require.NoError(c, err)
				lines := strings.Split(string(data), "\n")
				require.Len(c, lines, 3)
				ns, devs = lines[0], lines[1]
			}, 10*time.Second, 10*time.Millisecond)
			if tt.wantNS != "" {
				require.Equal(t, tt.wantNS, ns)
			} else {
				require.NotContains(t, []string{hostNS, givenNS}, ns)
			}
			if tt.wantDevs != "" {
				require.Equal(t, tt.wantDevs, devs)
			}
		})
	}
}

// newNetns creates a network namespace holding a veth pair (tv0, tv1) and
// returns its path; it is deleted when the test ends.
func newNetns(t *testing.T) string {
	if _, err := exec.LookPath("ip"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("needs iproute2's ip: %v", err)
	}
	name := fmt.Sprintf("troupe-test-%d", os.Getpid())
	run := func(args ...string) {
		out, err := exec.CommandContext(context.Background(), "ip", args...).CombinedOutput()
		require.NoError(t, err, "ip %v: %s", args, out)
	}
	run("netns", "add", name)
	t.Cleanup(func() { run("netns", "del", name) })
	run("-n", name, "link", "add", "tv0", "type", "veth", "peer", "name", "tv1")
	return "/run/netns/" + name
}
