package agent

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// netEnv is an agent whose allocations use bridge networking.
type netEnv struct {
	a   *Agent
	c   *api.Client
	cfg *Config
	dir string
}

func startNetAgent(t testing.TB, dir string) *netEnv {
	t.Helper()
	return startNetAgentWith(t, testConfig(t, dir))
}

func startNetAgentWith(t testing.TB, cfg *Config) *netEnv {
	t.Helper()
	requireRoot(t)
	dir := cfg.DataDir
	a := startAgent(t, cfg)
	t.Cleanup(func() { _ = a.Shutdown() })
	c, err := api.NewClient(&api.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = a.Shutdown()
		_ = exec.Command("ip", "link", "del", cfg.BridgeName).Run()
		entries, _ := os.ReadDir(cfg.NetnsDir)
		for _, en := range entries {
			_ = unix.Unmount(filepath.Join(cfg.NetnsDir, en.Name()), unix.MNT_DETACH)
		}
		_ = unix.Unmount(cfg.NetnsDir, unix.MNT_DETACH) // the shared mount made for netns files
	})
	return &netEnv{a: a, c: c, cfg: cfg, dir: dir}
}

// webJob is a bridge-mode job whose exec task serves its allocation ID
// over HTTP on port 8080 inside the allocation's namespace, mapped to a
// host port (static when static > 0, else dynamic).
func webJob(id string, count, static int) string {
	port := `port "http" { to = 8080 }`
	if static > 0 {
		port = fmt.Sprintf(`port "http" {
        static = %d
        to     = 8080
      }`, static)
	}
	return fmt.Sprintf(`job %q {
  group "g" {
    count = %d
    network {
      mode = "bridge"
      %s
    }
    task "web" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo $$ >> $NOMAD_TASK_DIR/starts; mkdir -p $NOMAD_TASK_DIR/www; echo $NOMAD_ALLOC_ID > $NOMAD_TASK_DIR/www/index.html; exec /usr/bin/busybox httpd -f -p 8080 -h $NOMAD_TASK_DIR/www"]
      }
      kill_timeout = "2s"
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`, id, count, port)
}

func (e *netEnv) run(t testing.TB, hcl string) string {
	t.Helper()
	job, err := e.c.Jobs().ParseHCL(hcl, true)
	require.NoError(t, err)
	_, _, err = e.c.Jobs().Register(job, nil)
	require.NoError(t, err)
	return job.GetID()
}

func (e *netEnv) allocs(jobID, status string) []*messages.Allocation {
	var out []*messages.Allocation
	for _, al := range e.a.Store().Snapshot().AllocsByJob("default", jobID) {
		if al.GetClientStatus() == status && al.GetDesiredStatus() == "run" {
			out = append(out, al)
		}
	}
	return out
}

// waitEnded waits for an allocation of the job whose client status is one
// of statuses, whatever the scheduler wants of it, and returns it.
func (e *netEnv) waitEnded(t testing.TB, jobID string, statuses ...string) *messages.Allocation {
	t.Helper()
	var found *messages.Allocation
	require.Eventually(t, func() bool {
		for _, al := range e.a.Store().Snapshot().AllocsByJob("default", jobID) {
			if slices.Contains(statuses, al.GetClientStatus()) {
				found = al
				return true
			}
		}
		return false
	}, 60*time.Second, 20*time.Millisecond, "no allocation of %s became %v", jobID, statuses)
	return found
}

func (e *netEnv) waitRunning(t testing.TB, jobID string, n int) []*messages.Allocation {
	t.Helper()
	require.Eventually(t, func() bool {
		run := e.allocs(jobID, "running")
		if len(run) != n {
			return false
		}
		for _, al := range run {
			if al.GetNetworkStatus().GetAddress() == "" {
				return false
			}
		}
		return true
	}, 60*time.Second, 20*time.Millisecond, "allocations of %s never ran with an address", jobID)
	return e.allocs(jobID, "running")
}

// hostPort is the host port mapped to the allocation's "http" port.
func hostPort(t testing.TB, al *messages.Allocation) int {
	t.Helper()
	for _, n := range al.GetAllocatedResources().GetShared().GetNetworks() {
		for _, p := range append(n.GetReservedPorts(), n.GetDynamicPorts()...) {
			if p.GetLabel() == "http" {
				return int(p.GetValue())
			}
		}
	}
	t.Fatalf("allocation %s has no http port: %v", al.GetID(), al.GetAllocatedResources())
	return 0
}

// get fetches http://127.0.0.1:port/ until it answers (the task needs a
// moment to listen), bounded by a deadline.
func get(t testing.TB, port int) string {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	var body string
	require.Eventually(t, func() bool {
		resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = strings.TrimSpace(string(b))
		return resp.StatusCode == http.StatusOK
	}, 20*time.Second, 50*time.Millisecond, "port %d never answered", port)
	return body
}

var counters = regexp.MustCompile(`\[\d+:\d+\]`)

// iptablesState is the iptables rules of this agent's bridge network
// (its name or an address of its subnet), without counters: other tests
// and packages add rules of their own at the same time.
func iptablesState(t testing.TB, cfg *Config) string {
	t.Helper()
	out, err := exec.Command("iptables-save").Output()
	require.NoError(t, err)
	prefix := netip.MustParsePrefix(cfg.BridgeSubnet).Addr().String()
	prefix = prefix[:strings.LastIndex(prefix, ".")+1] // a /24: "10.160.7."
	var keep []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "#") || strings.HasPrefix(l, ":") {
			continue
		}
		if strings.Contains(l, `"`+cfg.CNINetwork+`\"`) || strings.Contains(l, prefix) {
			keep = append(keep, counters.ReplaceAllString(l, ""))
		}
	}
	return strings.Join(keep, "\n")
}

// rulesMentioning counts iptables rules naming any of ids.
func rulesMentioning(t testing.TB, ids ...string) int {
	t.Helper()
	n := 0
	out, err := exec.Command("iptables-save").Output()
	require.NoError(t, err)
	for _, l := range strings.Split(string(out), "\n") {
		for _, id := range ids {
			if strings.Contains(l, id) {
				n++
			}
		}
	}
	return n
}

// simulateReboot does to the allocations' network state what a host
// reboot does: netns files and the tmpfs IPAM state are gone, the
// allocations' firewall rules and the bridge too.
func (e *netEnv) simulateReboot(t testing.TB, allocIDs ...string) {
	t.Helper()
	entries, _ := os.ReadDir(e.cfg.NetnsDir)
	for _, en := range entries {
		p := filepath.Join(e.cfg.NetnsDir, en.Name())
		_ = unix.Unmount(p, unix.MNT_DETACH)
		require.NoError(t, os.Remove(p))
	}
	require.NoError(t, os.RemoveAll(e.cfg.CNIStateDir))
	deleteRulesMentioning(t, allocIDs...)
	_ = exec.Command("ip", "link", "del", e.cfg.BridgeName).Run()
	require.Zero(t, rulesMentioning(t, allocIDs...))
}

// deleteRulesMentioning deletes the iptables rules naming any of ids in
// place (iptables-restore --noflush, one transaction per table). Saving the
// whole ruleset and restoring it without them would also undo every rule
// another test package added in between (the cluster tests' fence did
// vanish that way once).
func deleteRulesMentioning(t testing.TB, ids ...string) {
	t.Helper()
	out, err := exec.Command("iptables-save").Output()
	require.NoError(t, err)
	var script strings.Builder
	table, dels := "", 0
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(l, "*"):
			table, dels = l, 0
		case l == "COMMIT" && dels > 0:
			script.WriteString("COMMIT\n")
		case strings.HasPrefix(l, "-A ") && slices.ContainsFunc(ids, func(id string) bool { return strings.Contains(l, id) }):
			if dels == 0 {
				script.WriteString(table + "\n")
			}
			dels++
			script.WriteString("-D " + l[3:] + "\n")
		}
	}
	if script.Len() == 0 {
		return
	}
	restore := exec.Command("iptables-restore", "-w", "--noflush")
	restore.Stdin = strings.NewReader(script.String())
	out, err = restore.CombinedOutput()
	require.NoError(t, err, "%s\n%s", out, script.String())
}

// freePort is a TCP port nothing listens on right now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
