//go:build linux

package cni

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// testNet is a Network on its own bridge, subnet, network name, plugin
// directory (links to the system's plugins, so a test can break it) and
// state directories, all removed when the test ends.
type testNet struct {
	*Network
	cfg       Config
	pluginDir string
}

func newTestNet(t testing.TB) *testNet {
	t.Helper()
	requireRoot(t)
	subnet, err := freeSubnet()
	require.NoError(t, err)
	dir := t.TempDir()
	pluginDir := filepath.Join(dir, "plugins")
	require.NoError(t, os.Mkdir(pluginDir, 0o755))
	for _, p := range []string{"loopback", "bridge", "host-local", "firewall", "portmap"} {
		require.NoError(t, os.Symlink(filepath.Join(DefaultPluginDir, p), filepath.Join(pluginDir, p)))
	}
	name := "trt" + randHex(6)
	cfg := Config{
		PluginDirs: []string{pluginDir}, Name: name, Bridge: name, Subnet: subnet.String(),
		IPAMDataDir: filepath.Join(dir, "ipam"), NetnsDir: filepath.Join(dir, "netns"),
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	n, err := New(cfg)
	require.NoError(t, err)
	tn := &testNet{Network: n, cfg: n.cfg, pluginDir: pluginDir}
	t.Cleanup(func() { tn.destroy(t) })
	return tn
}

// destroy removes what the test left: its allocations (via GC), the
// bridge and the netns directory's mount.
func (tn *testNet) destroy(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	_ = os.Rename(tn.pluginDir+".away", tn.pluginDir)
	if err := tn.GC(ctx, func(string) bool { return false }); err != nil {
		t.Errorf("final GC: %v", err)
	}
	names, _ := netnsNames(tn.cfg.NetnsDir)
	for _, name := range names {
		_ = removeNetns(filepath.Join(tn.cfg.NetnsDir, name))
	}
	_ = unix.Unmount(tn.cfg.NetnsDir, unix.MNT_DETACH)
	_ = exec.Command("ip", "link", "del", tn.cfg.Bridge).Run()
}

// simulateReboot wipes what a reboot wipes: iptables rules, netns files
// (on tmpfs), host-local's and libcni's state (on tmpfs), the bridge.
func (tn *testNet) simulateReboot(t testing.TB, ids ...string) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, sweep(ctx, func(_ string, r rule) bool {
		net, _ := r.owner()
		return net == tn.cfg.Name || (r.chain == firewallChain && addrIn(r, tn.subnet))
	}))
	for _, id := range ids {
		require.NoError(t, removeNetns(tn.NetnsPath(id)))
	}
	require.NoError(t, os.RemoveAll(tn.cfg.IPAMDataDir))
	require.NoError(t, exec.Command("ip", "link", "del", tn.cfg.Bridge).Run())
}

func addrIn(r rule, p netip.Prefix) bool {
	m := addrRE.FindStringSubmatch(r.spec)
	if m == nil {
		return false
	}
	ip, err := netip.ParseAddr(m[1])
	return err == nil && p.Contains(ip)
}

// requireGone checks that nothing of the allocation is left: no netns, no
// host-local reservation, no cached result, no iptables rule naming it or
// its addresses.
func (tn *testNet) requireGone(t testing.TB, id string, ips ...netip.Addr) {
	t.Helper()
	_, err := os.Lstat(tn.NetnsPath(id))
	require.ErrorIs(t, err, os.ErrNotExist, "netns of %s left", id)
	require.Empty(t, tn.ipam.addrsOf(id), "host-local reservation of %s left", id)
	for _, ip := range ips {
		_, err := os.Lstat(filepath.Join(tn.ipam.dir, ip.String()))
		require.ErrorIs(t, err, os.ErrNotExist, "reservation file %s left", ip)
	}
	_, err = os.Lstat(filepath.Join(tn.cfg.CacheDir, "results", tn.cfg.Name+"-"+id+"-eth0"))
	require.ErrorIs(t, err, os.ErrNotExist, "libcni cache of %s left", id)
	rules, err := rulesMentioning(id, ips...)
	require.NoError(t, err)
	require.Empty(t, rules, "iptables rules of %s left", id)
}

// ipamFiles lists host-local's directory.
func (tn *testNet) ipamFiles(t testing.TB) []string {
	entries, err := os.ReadDir(tn.ipam.dir)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// inNetns runs fn on a thread inside the netns at path. The thread is
// never given back to the runtime.
func inNetns(path string, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- err
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		done <- fn()
	}()
	return <-done
}

// serveIn starts a TCP server on port in the netns that greets with msg.
func serveIn(t testing.TB, path string, port int, msg string) {
	t.Helper()
	var l net.Listener
	require.NoError(t, inNetns(path, func() (err error) {
		l, err = net.Listen("tcp4", fmt.Sprintf("0.0.0.0:%d", port))
		return err
	}))
	serve(t, l, msg)
}

// serve answers every connection to l with msg until the test ends.
func serve(t testing.TB, l net.Listener, msg string) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, msg)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = l.Close(); <-done })
}

// greeting dials addr (from the netns at path, or the host when "") and
// returns what the server says.
func greeting(path, addr string) (string, error) {
	var out string
	dial := func() error {
		c, err := net.DialTimeout("tcp4", addr, 5*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		data, err := io.ReadAll(c)
		out = string(data)
		return err
	}
	if path == "" {
		return out, dial()
	}
	return out, inNetns(path, dial)
}

// requireGreeting checks that addr answers msg, from the netns at path (or
// the host when "").
func requireGreeting(t testing.TB, path, addr, msg string) {
	t.Helper()
	got, err := greeting(path, addr)
	require.NoError(t, err, "dialing %s", addr)
	require.Equal(t, msg, got, "greeting from %s", addr)
}

// newID returns an allocation ID in UUID form.
func newID() string {
	h := randHex(16)
	return strings.Join([]string{h[:8], h[8:12], h[12:16], h[16:20], h[20:]}, "-")
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}

// nsInode identifies the namespace pinned at path.
func nsInode(t testing.TB, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	require.NoError(t, unix.Stat(path, &st))
	return st.Ino
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}
