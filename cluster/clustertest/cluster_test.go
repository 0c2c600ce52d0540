package clustertest_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/clustertest"
)

// exe is the test binary, re-executed as a helper inside hosts.
var exe = func() string {
	p, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return p
}()

// noRaceExitSleep stops a -race helper from sleeping 1 s at exit.
const noRaceExitSleep = "GORACE=atexit_sleep_ms=0"

// startEcho starts the echo helper on h and returns it with its port.
func startEcho(t *testing.T, h *clustertest.Host) (*clustertest.Proc, int) {
	t.Helper()
	p, err := h.StartSpec("echo", clustertest.Spec{Path: exe, Env: []string{helperEnv + "=echo", noRaceExitSleep}})
	require.NoError(t, err)
	var port int
	require.Eventually(t, func() bool {
		out, _ := p.Log()
		_, after, ok := strings.Cut(out, "listening ")
		if !ok {
			return false
		}
		port, _ = strconv.Atoi(strings.TrimSpace(after))
		return port > 0
	}, 5*time.Second, 10*time.Millisecond, "echo server on %s did not report its port", h.Name)
	return p, port
}

// dial runs the dial helper on from, against addr, and returns the reply.
func dial(from *clustertest.Host, addr, token string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := from.ExecSpec(ctx, clustertest.Spec{
		Path: exe, Args: []string{token},
		Env: []string{helperEnv + "=dial", addrEnv + "=" + addr, noRaceExitSleep},
	})
	return string(out), err
}

func TestCluster(t *testing.T) {
	forward, err := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	require.NoError(t, err)
	c := clustertest.New(t, 3)
	after, err := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	require.NoError(t, err)
	require.Equal(t, string(forward), string(after), "ip_forward must not change")
	hosts := c.Hosts()
	require.Len(t, hosts, 3)
	ports := make([]int, len(hosts))
	procs := make([]*clustertest.Proc, len(hosts))
	for i, h := range hosts {
		procs[i], ports[i] = startEcho(t, h)
	}

	t.Run("hostnames", func(t *testing.T) { testHostnames(t, hosts) })
	t.Run("only the subnet route", func(t *testing.T) { testRoutes(t, c, hosts) })
	t.Run("tcp between hosts", func(t *testing.T) { testAllPairs(t, hosts, ports) })
	t.Run("ping between hosts", func(t *testing.T) { testPing(t, hosts) })
	t.Run("not on root loopback", func(t *testing.T) {
		conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])), time.Second)
		if err == nil {
			_ = conn.Close()
		}
		require.Error(t, err, "host0's server must not be reachable on the root namespace's loopback")
	})
	t.Run("root reaches hosts via bridge", func(t *testing.T) {
		conn, err := net.DialTimeout("tcp", hosts[0].AddrPort(ports[0]), time.Second)
		require.NoError(t, err)
		require.NoError(t, conn.Close())
	})
	t.Run("partition and heal", func(t *testing.T) { testPartition(t, hosts, ports) })
	t.Run("kill", func(t *testing.T) { testKill(t, hosts, procs[2], ports[2]) })
	t.Run("signal", func(t *testing.T) {
		require.NoError(t, procs[1].Signal(os.Interrupt))
		require.Error(t, procs[1].Wait(5*time.Second))
		require.ErrorIs(t, procs[1].Signal(os.Interrupt), clustertest.ErrExited)
	})
}

func testHostnames(t *testing.T, hosts []*clustertest.Host) {
	root, err := os.Hostname()
	require.NoError(t, err)
	for _, h := range hosts {
		out, err := h.Exec(context.Background(), "uname", "-n")
		require.NoError(t, err)
		require.Equal(t, h.Name, strings.TrimSpace(string(out)))
		require.NotEqual(t, root, h.Name)
	}
	after, err := os.Hostname()
	require.NoError(t, err)
	require.Equal(t, root, after, "the root namespace's hostname must not change")
}

func testRoutes(t *testing.T, c *clustertest.Cluster, hosts []*clustertest.Host) {
	for _, h := range hosts {
		out, err := h.Exec(context.Background(), "ip", "-4", "route", "show")
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		require.Len(t, lines, 1, "routes on %s: %s", h.Name, out)
		require.True(t, strings.HasPrefix(lines[0], c.Subnet()+" dev eth0"), lines[0])
		out, err = h.Exec(context.Background(), "ip", "-4", "-o", "addr", "show")
		require.NoError(t, err)
		require.Contains(t, string(out), "inet 127.0.0.1/8")
		require.Contains(t, string(out), "eth0    inet "+h.Addr+"/24")
	}
}

func testAllPairs(t *testing.T, hosts []*clustertest.Host, ports []int) {
	for i, from := range hosts {
		for j, to := range hosts {
			if i == j {
				continue
			}
			out, err := dial(from, to.AddrPort(ports[j]), "from-"+from.Name)
			require.NoError(t, err)
			require.Equal(t, to.Name+" from-"+from.Name, out)
		}
	}
}

func testPing(t *testing.T, hosts []*clustertest.Host) {
	if _, err := exec.LookPath("ping"); err != nil {
		t.Skip("ping not installed (Debian package iputils-ping); the TCP check covers reachability")
	}
	for _, from := range hosts {
		for _, to := range hosts {
			_, err := from.Exec(context.Background(), "ping", "-c1", "-W1", to.Addr)
			require.NoError(t, err)
		}
	}
}

func testPartition(t *testing.T, hosts []*clustertest.Host, ports []int) {
	a, b := hosts[0], hosts[1]
	require.NoError(t, a.Partition())
	require.True(t, a.Partitioned())
	start := time.Now()
	_, err := dial(b, a.AddrPort(ports[0]), "cut")
	require.ErrorIs(t, err, clustertest.ErrExec)
	require.Less(t, time.Since(start), 4*time.Second)
	_, err = dial(a, b.AddrPort(ports[1]), "cut")
	require.Error(t, err, "a partitioned host must not reach others either")

	require.NoError(t, a.Heal())
	require.False(t, a.Partitioned())
	require.Eventually(t, func() bool {
		out, err := dial(b, a.AddrPort(ports[0]), "healed")
		return err == nil && out == a.Name+" healed"
	}, 5*time.Second, 50*time.Millisecond)
}

func testKill(t *testing.T, hosts []*clustertest.Host, p *clustertest.Proc, port int) {
	require.NoError(t, p.Kill())
	err := p.Wait(5 * time.Second)
	require.Error(t, err)
	require.False(t, errors.Is(err, clustertest.ErrTimeout), "killed process did not exit: %v", err)
	require.True(t, p.Exited())
	require.Equal(t, -1, p.ExitCode())
	_, err = dial(hosts[0], hosts[2].AddrPort(port), "dead")
	require.Error(t, err, "a killed server must not answer")
	require.NoError(t, p.Kill(), "killing an exited process is not an error")
}
