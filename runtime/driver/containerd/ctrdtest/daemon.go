//go:build linux

package ctrdtest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/snapshots"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/stretchr/testify/require"
)

// Daemon is a containerd that a test runs for itself: its config, root,
// state, socket and log live in one short dir under the temp dir, apart
// from the host's containerd. Its methods are not safe for concurrent use.
type Daemon struct {
	dir    string // config, root, state, socket and log live here
	sock   string
	ns     string // the namespace tests use
	cmd    *exec.Cmd
	closed bool
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

// daemons numbers the daemons of this process, for their namespaces.
var daemons atomic.Int64

// StartDaemon starts a containerd for tb and stops it and removes its
// files (killing what still runs on it) when tb ends. It skips tb unless
// it runs as root with containerd and runc (fails instead with CI=true).
func StartDaemon(tb testing.TB) *Daemon {
	tb.Helper()
	RequireHost(tb)
	dm, err := NewDaemon()
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, dm.Close()) })
	return dm
}

// NewDaemon starts a containerd in a new dir, for callers that outlive
// one test (e.g. TestMain), who must Close it. It checks nothing about
// the host: call RequireHost first.
func NewDaemon() (*Daemon, error) {
	dir, err := os.MkdirTemp("", "ctrd") // short: the socket lives here
	if err != nil {
		return nil, err
	}
	dm := &Daemon{dir: dir, sock: filepath.Join(dir, "c.sock"),
		ns: fmt.Sprintf("troupe-test-%d-%d", os.Getpid(), daemons.Add(1))}
	if len(dm.sock) >= 100 {
		err = fmt.Errorf("ctrdtest: socket path %s is too long (set a shorter TMPDIR)", dm.sock)
	} else {
		err = os.WriteFile(filepath.Join(dir, "config.toml"), fmt.Appendf(nil, daemonConfig, dir), 0o600)
	}
	if err == nil {
		err = dm.Start()
	}
	if err != nil {
		return nil, errors.Join(err, dm.Close())
	}
	return dm, nil
}

// Address is the path of containerd's socket.
func (dm *Daemon) Address() string { return dm.sock }

// Namespace is a containerd namespace of this daemon's own, which no
// other daemon of this process uses; tests may use any other.
func (dm *Daemon) Namespace() string { return dm.ns }

// Start runs containerd on the daemon's root and state (again, after Stop
// or WipeState) and waits until it answers.
func (dm *Daemon) Start() error {
	if dm.cmd != nil || dm.closed {
		return errors.New("ctrdtest: containerd is running or closed")
	}
	logf, err := os.OpenFile(filepath.Join(dm.dir, "containerd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	dm.cmd = exec.Command("containerd", "--config", filepath.Join(dm.dir, "config.toml"))
	dm.cmd.Stdout, dm.cmd.Stderr = logf, logf
	dm.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := dm.cmd.Start(); err != nil {
		dm.cmd = nil
		return err
	}
	if err := dm.waitReady(30 * time.Second); err != nil {
		dm.kill()
		return fmt.Errorf("ctrdtest: containerd did not come up: %w (log: %s)", err, dm.logTail())
	}
	return nil
}

func (dm *Daemon) waitReady(timeout time.Duration) error {
	cl, err := client.New(dm.sock)
	if err != nil {
		return err
	}
	defer cl.Close()
	return poll(timeout, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := cl.Version(ctx)
		return err
	})
}

// Stop ends containerd gracefully; the shims and their tasks live on, and
// Start brings containerd back to them. Stopping a stopped daemon does
// nothing.
func (dm *Daemon) Stop() error {
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
		return nil // ended by our signal
	}
	return err
}

// kill ends containerd at once, as a crash or a power cut would.
func (dm *Daemon) kill() {
	if dm.cmd == nil {
		return
	}
	_ = dm.cmd.Process.Kill()
	_ = dm.cmd.Wait()
	dm.cmd = nil
}

// Close stops containerd, kills the shims and tasks it started, removes
// what they left on the host and removes the daemon's dir. Closing twice
// does nothing.
func (dm *Daemon) Close() error {
	if dm.closed {
		return nil
	}
	dm.closed = true
	errs := []error{dm.Stop(), dm.killShims(), dm.removeHostState(), unmountUnder(dm.dir)}
	if err := os.RemoveAll(dm.dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Client is a raw containerd client whose default namespace is
// Namespace(), with a context in that namespace; it is closed when tb
// ends.
func (dm *Daemon) Client(tb testing.TB) (*client.Client, context.Context) {
	tb.Helper()
	cl, err := client.New(dm.sock, client.WithDefaultNamespace(dm.ns))
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = cl.Close() })
	return cl, namespaces.WithNamespace(context.Background(), dm.ns)
}

// Containers lists the ids of the containers of Namespace(), sorted.
func (dm *Daemon) Containers(tb testing.TB) []string {
	tb.Helper()
	cl, ctx := dm.Client(tb)
	cs, err := cl.Containers(ctx)
	require.NoError(tb, err)
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		ids = append(ids, c.ID())
	}
	slices.Sort(ids)
	return ids
}

// ActiveSnapshots lists the keys of the active (writable, in use or
// orphaned) snapshots of Namespace() in snapshotter, sorted.
func (dm *Daemon) ActiveSnapshots(tb testing.TB, snapshotter string) []string {
	tb.Helper()
	cl, ctx := dm.Client(tb)
	var keys []string
	err := cl.SnapshotService(snapshotter).Walk(ctx, func(_ context.Context, info snapshots.Info) error {
		if info.Kind == snapshots.KindActive {
			keys = append(keys, info.Name)
		}
		return nil
	})
	require.NoError(tb, err)
	slices.Sort(keys)
	return keys
}

// ShimSocket is the path of the socket of the shim of container id in
// Namespace(), as containerd derives it (under /run/containerd/s, which a
// reboot wipes).
func (dm *Daemon) ShimSocket(id string) string {
	return shimSocket(dm.sock, dm.ns, id)
}

func shimSocket(sock, ns, id string) string {
	sum := sha256.Sum256([]byte(filepath.Join(sock, ns, id)))
	return fmt.Sprintf("/run/containerd/s/%x", sum)
}

func (dm *Daemon) logTail() string {
	data, _ := os.ReadFile(filepath.Join(dm.dir, "containerd.log"))
	if len(data) > 2000 {
		data = data[len(data)-2000:]
	}
	return string(data)
}
