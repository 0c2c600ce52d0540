//go:build linux

package containerd

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
)

// daemon is a containerd that a test package runs for itself.
type daemon struct {
	dir  string // config, root, state, socket and log live here
	sock string
	ns   string // the namespace tests use
	cmd  *exec.Cmd
}

// daemonConfig keeps the daemon off the host's paths and without CRI.
const daemonConfig = `version = 2
root = "%[1]s/root"
state = "%[1]s/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]

[grpc]
  address = "%[1]s/c.sock"

[plugins."io.containerd.internal.v1.opt"]
  path = "%[1]s/opt"
`

// startDaemon writes a config into dir (whose path must be short: the
// socket lives there) and starts containerd on it.
func startDaemon(dir, ns string) (*daemon, error) {
	dm := &daemon{dir: dir, sock: filepath.Join(dir, "c.sock"), ns: ns}
	if len(dm.sock) >= 100 {
		return nil, fmt.Errorf("socket path %s is too long", dm.sock)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), fmt.Appendf(nil, daemonConfig, dir), 0o600); err != nil {
		return nil, err
	}
	return dm, dm.start()
}

// start runs containerd and waits until it answers.
func (dm *daemon) start() error {
	logf, err := os.OpenFile(filepath.Join(dm.dir, "containerd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	dm.cmd = exec.Command("containerd", "--config", filepath.Join(dm.dir, "config.toml"))
	dm.cmd.Stdout, dm.cmd.Stderr = logf, logf
	dm.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := dm.cmd.Start(); err != nil {
		return err
	}
	if err := dm.waitReady(30 * time.Second); err != nil {
		dm.kill()
		return fmt.Errorf("containerd did not come up: %w (log: %s)", err, dm.logTail())
	}
	return nil
}

func (dm *daemon) waitReady(timeout time.Duration) error {
	cl, err := client.New(dm.sock)
	if err != nil {
		return err
	}
	defer cl.Close()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := cl.Version(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		<-time.After(50 * time.Millisecond)
	}
}

// client returns a raw client in the test namespace and a context for it.
func (dm *daemon) client() (*client.Client, context.Context, error) {
	cl, err := client.New(dm.sock, client.WithDefaultNamespace(dm.ns))
	return cl, namespaces.WithNamespace(context.Background(), dm.ns), err
}

// stop ends containerd gracefully; the shims and their tasks live on.
func (dm *daemon) stop() error {
	if dm.cmd == nil {
		return nil
	}
	_ = dm.cmd.Process.Signal(syscall.SIGTERM)
	t := time.AfterFunc(15*time.Second, func() { _ = dm.cmd.Process.Kill() })
	defer t.Stop()
	err := dm.cmd.Wait()
	dm.cmd = nil
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return nil // killed by our signal
	}
	return err
}

// kill ends containerd at once, as a crash or a power cut would.
func (dm *daemon) kill() {
	if dm.cmd == nil {
		return
	}
	_ = dm.cmd.Process.Kill()
	_ = dm.cmd.Wait()
	dm.cmd = nil
}

// shimPids are the pids of the shims this daemon started.
func (dm *daemon) shimPids() []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if strings.Contains(args[0], "containerd-shim") && strings.Contains(string(cmdline), dm.sock) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// shimSocket is the path of the socket of the shim of container id, as
// containerd derives it.
func (dm *daemon) shimSocket(id string) string {
	sum := sha256.Sum256([]byte(filepath.Join(dm.sock, dm.ns, id)))
	return fmt.Sprintf("/run/containerd/s/%x", sum)
}

// removeHostState removes what containerd and runc keep outside dir for
// the namespace: runc's state and the cgroups (a reboot wipes both).
func (dm *daemon) removeHostState() {
	_ = os.RemoveAll(filepath.Join("/run/containerd/runc", dm.ns))
	roots, _ := filepath.Glob("/sys/fs/cgroup/*/" + dm.ns)
	if _, err := os.Stat("/sys/fs/cgroup/" + dm.ns); err == nil {
		roots = append(roots, "/sys/fs/cgroup/"+dm.ns)
	}
	for _, root := range roots {
		children, _ := os.ReadDir(root)
		for _, c := range children {
			if c.IsDir() {
				_ = os.Remove(filepath.Join(root, c.Name()))
			}
		}
		_ = os.Remove(root)
	}
}

// wipeState unmounts what is mounted under containerd's state dir (the
// tasks' rootfs) and removes the dir, as a reboot does to /run.
func (dm *daemon) wipeState() error {
	state := filepath.Join(dm.dir, "state")
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	var points []string
	for _, line := range strings.Split(string(info), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], state+"/") {
			points = append(points, f[4])
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) }) // deepest first
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil {
			return fmt.Errorf("unmounting %s: %w", p, err)
		}
	}
	return os.RemoveAll(state)
}

func (dm *daemon) logTail() string {
	data, _ := os.ReadFile(filepath.Join(dm.dir, "containerd.log"))
	if len(data) > 2000 {
		data = data[len(data)-2000:]
	}
	return string(data)
}
