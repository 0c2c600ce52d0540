package agent

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-uuid"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/cni"
)

// TestBridgeNetworkPorts: two allocations of one group on one host each
// get their own namespace and address on the bridge, and their mapped
// host ports reach them from the host.
func TestBridgeNetworkPorts(t *testing.T) {
	e := startNetAgent(t, t.TempDir())
	jobID := e.run(t, webJob("web", 2, 0))
	allocs := e.waitRunning(t, jobID, 2)
	subnet := netip.MustParsePrefix(e.cfg.BridgeSubnet)
	seen := map[string]bool{}
	for _, al := range allocs {
		addr := netip.MustParseAddr(al.GetNetworkStatus().GetAddress())
		require.True(t, subnet.Contains(addr), "%s is outside %s", addr, subnet)
		require.False(t, seen[addr.String()], "two allocations share %s", addr)
		seen[addr.String()] = true
		require.Equal(t, al.GetID(), get(t, hostPort(t, al)), "the host port reaches its own allocation")
		_, err := os.Stat(filepath.Join(e.cfg.NetnsDir, al.GetID()))
		require.NoError(t, err, "one namespace per allocation")
	}
	_, _, err := e.c.Jobs().Deregister(jobID, false, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		entries, _ := os.ReadDir(e.cfg.NetnsDir)
		return len(entries) == 0 && rulesMentioning(t, allocs[0].GetID(), allocs[1].GetID()) == 0
	}, 30*time.Second, 20*time.Millisecond, "teardown left namespaces or firewall rules")
}

// TestBridgeNetworkSurvivesAgentRestart: the agent stops (its tasks go
// on); restarted, it re-attaches: same task, same address, working port.
func TestBridgeNetworkSurvivesAgentRestart(t *testing.T) {
	dir := t.TempDir()
	e := startNetAgent(t, dir)
	jobID := e.run(t, webJob("web", 1, 0))
	al := e.waitRunning(t, jobID, 1)[0]
	require.Equal(t, al.GetID(), get(t, hostPort(t, al)))
	starts := filepath.Join(e.a.AllocDir(), al.GetID(), "web", "local", "starts")
	crash(t, e.a)

	b := startNetAgent(t, dir)
	require.Eventually(t, func() bool {
		got := b.a.Store().Snapshot().AllocByID(al.GetID())
		return got.GetClientStatus() == "running" && got.GetNetworkStatus().GetAddress() == al.GetNetworkStatus().GetAddress()
	}, 30*time.Second, 20*time.Millisecond)
	require.Equal(t, al.GetID(), get(t, hostPort(t, al)))
	require.Len(t, readLines(t, starts), 1, "the task must not start twice")
	entries, err := os.ReadDir(e.cfg.NetnsDir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no second namespace")
}

// TestBridgeNetworkAfterReboot: five times over, stop the agent, kill
// the task, and wipe what a reboot wipes (netns files, IPAM state,
// firewall rules, the bridge); each time the restarted agent gives the
// allocation a fresh namespace and address, restarts its task once, and
// the port works again. Stopping the job at the end leaves no namespace,
// reservation or rule.
func TestBridgeNetworkAfterReboot(t *testing.T) {
	dir := t.TempDir()
	e := startNetAgent(t, dir)
	jobID := e.run(t, webJob("web", 1, freePort(t)))
	al := e.waitRunning(t, jobID, 1)[0]
	require.Equal(t, al.GetID(), get(t, hostPort(t, al)))
	starts := filepath.Join(e.a.AllocDir(), al.GetID(), "web", "local", "starts")
	reboots := 5
	if testing.Short() {
		reboots = 1
	}
	for i := 1; i <= reboots; i++ {
		pid := taskPid(t, e.a, al.GetID(), "web") // inside its pid namespace the task is pid 1
		crash(t, e.a)
		_ = syscall.Kill(pid, syscall.SIGKILL)
		e.simulateReboot(t, al.GetID())

		e = startNetAgent(t, dir)
		require.Eventually(t, func() bool {
			got := e.a.Store().Snapshot().AllocByID(al.GetID())
			return got.GetClientStatus() == "running" && len(readLines(t, starts)) == i+1
		}, 60*time.Second, 20*time.Millisecond, "the allocation did not come back after reboot %d", i)
		require.Equal(t, al.GetID(), get(t, hostPort(t, al)), "the port works again after reboot %d", i)
		got := e.a.Store().Snapshot().AllocByID(al.GetID())
		require.True(t, netip.MustParsePrefix(e.cfg.BridgeSubnet).Contains(netip.MustParseAddr(got.GetNetworkStatus().GetAddress())))
	}
	_, _, err := e.c.Jobs().Deregister(jobID, false, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		entries, _ := os.ReadDir(e.cfg.NetnsDir)
		return len(entries) == 0 && len(ipamReservations(t, e.cfg.CNIStateDir)) == 0 && rulesMentioning(t, al.GetID()) == 0
	}, 30*time.Second, 20*time.Millisecond, "the stopped allocation left namespaces, reservations or rules")
}

// TestBridgePortTakenFailsCleanly: a static port that something on the
// host holds fails the allocation with a message naming the port, and
// leaves no namespace, IPAM reservation or firewall rule behind.
func TestBridgePortTakenFailsCleanly(t *testing.T) {
	e := startNetAgent(t, t.TempDir())
	l, err := net.Listen("tcp", "0.0.0.0:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	jobID := e.run(t, webJob("busy", 1, port))
	failed := e.waitEnded(t, jobID, "failed")
	require.Contains(t, failed.GetClientDescription(), strconv.Itoa(port))
	entries, _ := os.ReadDir(e.cfg.NetnsDir)
	require.Empty(t, entries)
	require.Zero(t, rulesMentioning(t, failed.GetID()))
	require.Empty(t, ipamReservations(t, e.cfg.CNIStateDir))
}

// TestBridgeNoLeaksOverCycles runs and stops allocations again and again
// (the leaks Nomad's #18842 and #11272 describe): afterwards the
// firewall is as it was, with no IPAM reservation and no namespace left.
func TestBridgeNoLeaksOverCycles(t *testing.T) {
	e := startNetAgent(t, t.TempDir())
	cycle := func(i int) {
		jobID := e.run(t, webJob("cycle"+strconv.Itoa(i), 5, 0))
		e.waitRunning(t, jobID, 5)
		require.NotEmpty(t, iptablesState(t, e.cfg), "the running allocations' rules are seen")
		_, _, err := e.c.Jobs().Deregister(jobID, false, nil)
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			entries, _ := os.ReadDir(e.cfg.NetnsDir)
			return len(entries) == 0 && len(ipamReservations(t, e.cfg.CNIStateDir)) == 0
		}, 60*time.Second, 20*time.Millisecond, "cycle %d left namespaces or reservations", i)
	}
	cycle(0) // creates the shared chains every allocation uses
	before := iptablesState(t, e.cfg)
	n := 10
	if testing.Short() {
		n = 2
	}
	for i := 1; i <= n; i++ {
		cycle(i)
	}
	require.Equal(t, before, iptablesState(t, e.cfg), "firewall rules leaked")
}

// ipamReservations lists host-local's address files (not its lock and
// last-reserved bookkeeping).
func ipamReservations(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if n := d.Name(); n != "lock" && !strings.HasPrefix(n, "last_reserved_ip") && net.ParseIP(n) != nil {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func readLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

// TestNetworkSweepRemovesWhatNoAllocationOwns: while the agent runs, its
// periodic network GC removes a network that no allocation of the client
// owns (namespace, address, rules) and leaves a running allocation's
// alone.
func TestNetworkSweepRemovesWhatNoAllocationOwns(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.NetworkGCInterval = 100 * time.Millisecond
	e := startNetAgentWith(t, cfg)
	jobID := e.run(t, webJob("web", 1, 0))
	al := e.waitRunning(t, jobID, 1)[0]

	stray, err := uuid.GenerateUUID()
	require.NoError(t, err)
	res, err := e.a.network.Setup(context.Background(), cni.SetupRequest{AllocID: stray,
		Ports: []cni.PortMapping{{HostPort: freePort(t), ContainerPort: 80}}})
	require.NoError(t, err)
	require.NotZero(t, rulesMentioning(t, stray))
	require.Eventually(t, func() bool {
		_, err := os.Stat(res.NetnsPath)
		return os.IsNotExist(err) && rulesMentioning(t, stray) == 0
	}, 30*time.Second, 20*time.Millisecond, "the stray network was not swept")

	require.Equal(t, al.GetID(), get(t, hostPort(t, al)), "the allocation's network is untouched")
	_, err = os.Stat(filepath.Join(e.cfg.NetnsDir, al.GetID()))
	require.NoError(t, err)
	require.NotZero(t, rulesMentioning(t, al.GetID()))
}
