//go:build linux

package cni

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestSetupGivesAnAddressAndForwardsPorts(t *testing.T) {
	tn := newTestNet(t)
	ctx := testCtx(t)
	id, port := newID(), mustFreePort(t)
	res, err := tn.Setup(ctx, SetupRequest{AllocID: id, JobID: "web", Group: "frontend",
		Ports: []PortMapping{{Label: "http", HostPort: port, ContainerPort: 80}}})
	require.NoError(t, err)

	require.True(t, tn.Subnet().Contains(res.IP), "%s not in %s", res.IP, tn.Subnet())
	require.Equal(t, tn.Subnet().Addr().Next(), res.Gateway)
	require.NotEqual(t, res.Gateway, res.IP)
	require.Equal(t, tn.NetnsPath(id), res.NetnsPath)
	require.Equal(t, "eth0", res.Interface)
	require.True(t, netnsExists(res.NetnsPath))
	require.Equal(t, []PortMapping{{Label: "http", HostPort: port, ContainerPort: 80, Protocol: "tcp"}}, res.Ports)
	owner, err := os.ReadFile(filepath.Join(tn.ipam.dir, res.IP.String()))
	require.NoError(t, err)
	require.Contains(t, string(owner), id)
	decoded, err := decodeResult(res.RawResult)
	require.NoError(t, err)
	require.Equal(t, []netip.Addr{res.IP}, resultAddrs(decoded))

	msg := "hello from " + id
	serveIn(t, res.NetnsPath, 80, msg)
	hostPort := fmt.Sprint(port)
	// Through the mapped port: on localhost (portmap's snat sets
	// route_localnet on the bridge), on the gateway, on the host's address.
	requireGreeting(t, "", net.JoinHostPort("127.0.0.1", hostPort), msg)
	requireGreeting(t, "", net.JoinHostPort(res.Gateway.String(), hostPort), msg)
	if ip, ok := hostIPv4(tn.Subnet()); ok {
		requireGreeting(t, "", net.JoinHostPort(ip.String(), hostPort), msg)
	}
	// Directly to the allocation's address, and out of the netns to the host.
	requireGreeting(t, "", net.JoinHostPort(res.IP.String(), "80"), msg)
	l, err := net.Listen("tcp4", net.JoinHostPort(res.Gateway.String(), "0"))
	require.NoError(t, err)
	serve(t, l, "hello from the host")
	requireGreeting(t, res.NetnsPath, l.Addr().String(), "hello from the host")

	require.NoError(t, tn.Teardown(ctx, id, res.RawResult, SetupRequest{}))
	require.Zero(t, tn.delFailures.Load(), "CNI DEL must succeed")
	tn.requireGone(t, id, res.IP)
	_, err = greeting("", net.JoinHostPort("127.0.0.1", hostPort))
	require.Error(t, err, "the port must not be forwarded after teardown")
}

func TestTwoAllocationsGetDifferentAddressesOnOneBridge(t *testing.T) {
	tn := newTestNet(t)
	ctx := testCtx(t)
	a, err := tn.Setup(ctx, SetupRequest{AllocID: newID()})
	require.NoError(t, err)
	b, err := tn.Setup(ctx, SetupRequest{AllocID: newID()})
	require.NoError(t, err)
	require.NotEqual(t, a.IP, b.IP)
	require.NotEqual(t, a.NetnsPath, b.NetnsPath)
	require.True(t, tn.Subnet().Contains(a.IP) && tn.Subnet().Contains(b.IP))
	serveIn(t, b.NetnsPath, 8080, "b")
	requireGreeting(t, a.NetnsPath, net.JoinHostPort(b.IP.String(), "8080"), "b")
}

func mustFreePort(t testing.TB) int {
	t.Helper()
	p, err := freePort()
	require.NoError(t, err)
	return p
}

func TestSetupRefusesATakenHostPortAndLeavesNothing(t *testing.T) {
	tn := newTestNet(t)
	ctx := testCtx(t)
	before, err := iptablesState()
	require.NoError(t, err)

	// Bound by a socket on the host.
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	id := newID()
	_, err = tn.Setup(ctx, SetupRequest{AllocID: id, Ports: []PortMapping{
		{Label: "ok", HostPort: mustFreePort(t)}, {Label: "http", HostPort: taken, ContainerPort: 80}}})
	require.ErrorIs(t, err, ErrPortInUse)
	require.ErrorContains(t, err, fmt.Sprintf("port %d (tcp) is already in use by a socket on the host", taken))
	tn.requireGone(t, id)
	require.Empty(t, tn.ipamFiles(t))
	after, err := iptablesState()
	require.NoError(t, err)
	require.Equal(t, before, after, "a refused setup must not touch iptables")

	// Forwarded by portmap for another allocation: nothing binds it.
	port, first := mustFreePort(t), newID()
	res, err := tn.Setup(ctx, SetupRequest{AllocID: first, Ports: []PortMapping{{HostPort: port}}})
	require.NoError(t, err)
	second := newID()
	_, err = tn.Setup(ctx, SetupRequest{AllocID: second, Ports: []PortMapping{{HostPort: port}}})
	require.ErrorIs(t, err, ErrPortInUse)
	require.ErrorContains(t, err, fmt.Sprintf("port %d (tcp) is already in use by the port mapping of %q", port, first))
	tn.requireGone(t, second)
	require.Equal(t, []string{res.IP.String()}, reservedAddrs(t, tn))
}

func TestSetupRemovesWhatAFailedAddMade(t *testing.T) {
	tn := newTestNet(t)
	ctx := testCtx(t)
	// portmap, the last plugin, fails: loopback, bridge and firewall ran.
	portmap := filepath.Join(tn.pluginDir, "portmap")
	require.NoError(t, os.Remove(portmap))
	seen := filepath.Join(t.TempDir(), "seen")
	require.NoError(t, os.WriteFile(portmap, []byte(`#!/bin/sh
if [ "$CNI_COMMAND" = ADD ]; then
  echo "$CNI_ARGS" > `+seen+`.args; cat > `+seen+`.stdin
  echo '{"cniVersion":"1.0.0","code":999,"msg":"injected failure"}'; exit 1
fi
exit 0
`), 0o755))
	id, port := newID(), mustFreePort(t)
	_, err := tn.Setup(ctx, SetupRequest{AllocID: id, JobID: "web", Group: "fe",
		Ports: []PortMapping{{HostPort: port, ContainerPort: 80}}})
	require.ErrorIs(t, err, ErrPlugin)
	require.ErrorContains(t, err, "injected failure")
	args, err := os.ReadFile(seen + ".args")
	require.NoError(t, err)
	require.Equal(t, "IgnoreUnknown=1;TROUPE_ALLOC_ID="+id+";TROUPE_JOB_ID=web;TROUPE_GROUP=fe\n", string(args))
	stdin, err := os.ReadFile(seen + ".stdin")
	require.NoError(t, err)
	require.Contains(t, string(stdin), fmt.Sprintf(
		`"runtimeConfig":{"portMappings":[{"containerPort":80,"hostPort":%d,"protocol":"tcp"}]}`, port))
	require.Contains(t, string(stdin), `"prevResult":{`)
	tn.requireGone(t, id, tn.Subnet().Addr().Next().Next())
	require.Empty(t, reservedAddrs(t, tn))
	rules, err := rulesMentioning(tn.cfg.Name)
	require.NoError(t, err)
	require.Empty(t, rules, "the bridge's masquerade rules must go")
}

func TestSetupRejectsBadRequestsBeforeCreatingAnything(t *testing.T) {
	tn := newTestNet(t)
	ctx := testCtx(t)
	for name, req := range map[string]SetupRequest{
		"empty alloc ID":    {},
		"alloc ID with /":   {AllocID: "a/b"},
		"job ID with ;":     {AllocID: newID(), JobID: "a;b"},
		"bad protocol":      {AllocID: newID(), Ports: []PortMapping{{HostPort: 8080, Protocol: "sctp"}}},
		"host port 0":       {AllocID: newID(), Ports: []PortMapping{{HostPort: 0, ContainerPort: 80}}},
		"host port 70000":   {AllocID: newID(), Ports: []PortMapping{{HostPort: 70000}}},
		"same port twice":   {AllocID: newID(), Ports: []PortMapping{{HostPort: 8080}, {HostPort: 8080}}},
		"container port -1": {AllocID: newID(), Ports: []PortMapping{{HostPort: 8080, ContainerPort: -1}}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := tn.Setup(ctx, req)
			require.ErrorIs(t, err, ErrInvalidRequest)
		})
	}
	_, err := os.Stat(tn.cfg.NetnsDir)
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = os.Stat(tn.cfg.IPAMDataDir)
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestSetupOfAnExistingNetnsFails(t *testing.T) {
	tn := newTestNet(t)
	ctx := testCtx(t)
	id := newID()
	res, err := tn.Setup(ctx, SetupRequest{AllocID: id})
	require.NoError(t, err)
	_, err = tn.Setup(ctx, SetupRequest{AllocID: id})
	require.ErrorIs(t, err, ErrExists)
	require.Equal(t, []string{res.IP.String()}, reservedAddrs(t, tn), "the first setup stays")
	require.True(t, netnsExists(res.NetnsPath))
}

// reservedAddrs lists host-local's reservations.
func reservedAddrs(t testing.TB, tn *testNet) []string {
	t.Helper()
	res, err := tn.ipam.reservations()
	require.NoError(t, err)
	var out []string
	for ip := range res {
		out = append(out, ip.String())
	}
	return out
}

func TestSetupCutShortByItsContextLeavesNothing(t *testing.T) {
	tn := newTestNet(t)
	dir := t.TempDir()
	fifo, started := filepath.Join(dir, "fifo"), filepath.Join(dir, "started")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	// portmap's ADD hangs (in open(2) of a fifo nobody writes).
	portmap := filepath.Join(tn.pluginDir, "portmap")
	require.NoError(t, os.Remove(portmap))
	require.NoError(t, os.WriteFile(portmap, []byte(`#!/bin/sh
if [ "$CNI_COMMAND" = ADD ]; then touch `+started+`; exec cat `+fifo+`; fi
exit 0
`), 0o755))
	ctx, cancel := context.WithCancel(context.Background())
	id := newID()
	done := make(chan error, 1)
	go func() {
		_, err := tn.Setup(ctx, SetupRequest{AllocID: id, Ports: []PortMapping{{HostPort: mustFreePort(t)}}})
		done <- err
	}()
	require.Eventually(t, func() bool { _, err := os.Stat(started); return err == nil },
		testTimeout, 10*time.Millisecond, "portmap's ADD never started")
	require.True(t, netnsExists(tn.NetnsPath(id)))
	require.Len(t, reservedAddrs(t, tn), 1)
	cancel()
	err := <-done
	require.ErrorIs(t, err, context.Canceled)
	tn.requireGone(t, id, tn.Subnet().Addr().Next().Next())
	require.Empty(t, reservedAddrs(t, tn))
}

func TestSetupRetriesAnAddThatCollidedWithAnotherIptablesChange(t *testing.T) {
	tn := newTestNet(t)
	ctx := testCtx(t)
	marker := collideFirstAdd(t, tn)
	id := newID()
	res, err := tn.Setup(ctx, SetupRequest{AllocID: id})
	require.NoError(t, err)
	require.FileExists(t, marker+".del", "the first ADD and its cleanup DEL failed")
	require.Zero(t, tn.delFailures.Load(), "a cleanup after a failed ADD is not a failed teardown")
	require.Equal(t, []string{res.IP.String()}, reservedAddrs(t, tn))
	require.NoError(t, tn.Teardown(ctx, id, res.RawResult, SetupRequest{}))
	require.Zero(t, tn.delFailures.Load())
	tn.requireGone(t, id, res.IP)
}

// TestRestoreRetriesAnAddThatCollided: after a reboot (the netns gone)
// Restore runs ADD again, and a collision there is retried as in Setup.
func TestRestoreRetriesAnAddThatCollided(t *testing.T) {
	tn := newTestNet(t)
	ctx := testCtx(t)
	id := newID()
	res, err := tn.Setup(ctx, SetupRequest{AllocID: id})
	require.NoError(t, err)
	require.NoError(t, removeNetns(res.NetnsPath)) // the reboot took it
	marker := collideFirstAdd(t, tn)
	again, err := tn.Restore(ctx, id, res.RawResult, SetupRequest{})
	require.NoError(t, err)
	require.True(t, again.Recreated)
	require.FileExists(t, marker+".again", "the first ADD collided, the second ran")
	require.True(t, netnsExists(again.NetnsPath))
	require.NoError(t, tn.Teardown(ctx, id, again.RawResult, SetupRequest{}))
	tn.requireGone(t, id, again.IP)
}

// collideFirstAdd replaces the bridge plugin: its first ADD fails the way
// iptables-nft does when another process's transaction hid the chain it
// had just made, and so does the DEL that cleans up after it (the chain
// is not there); from the second ADD on, every call is the real bridge.
// It returns the marker path whose siblings (.del, .again) record that.
func collideFirstAdd(t *testing.T, tn *testNet) string {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "collided")
	bridge := filepath.Join(tn.pluginDir, "bridge")
	require.NoError(t, os.Remove(bridge))
	require.NoError(t, os.WriteFile(bridge, []byte(`#!/bin/sh
fail() { echo '{"cniVersion":"1.0.0","code":999,"msg":"'"$1"'"}'; exit 1; }
if [ ! -e `+marker+`.again ]; then
  case "$CNI_COMMAND" in
  ADD) if [ -e `+marker+` ]; then touch `+marker+`.again; else
         touch `+marker+`; fail "running [iptables -t nat -A CNI-x]: exit status 1: iptables: No chain/target/match by that name."; fi ;;
  DEL) [ -e `+marker+` ] && touch `+marker+`.del && fail "running [iptables -t nat -D POSTROUTING -j CNI-x]: exit status 2: iptables v1.8.9 (nf_tables): Chain 'CNI-x' does not exist" ;;
  esac
fi
exec `+filepath.Join(DefaultPluginDir, "bridge")+`
`), 0o755))
	return marker
}
