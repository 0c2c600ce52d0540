//go:build linux

package containerd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/snapshots"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// testImageName is the name the test archive gives its image.
const testImageName = "docker.io/troupe/busybox:test"

// testEnv is what the package's tests share: one containerd, the test
// image as an archive, and (started when a test asks) a registry.
type testEnv struct {
	dir     string
	daemon  *daemon
	image   *testImage
	archive string

	regOnce  sync.Once
	registry *registry
	regErr   error
}

var (
	envOnce   sync.Once
	sharedEnv *testEnv
	envErr    error
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if err := teardown(); err != nil {
			fmt.Fprintln(os.Stderr, "teardown:", err)
			code = max(code, 1)
		}
		os.Exit(code)
	}))
}

// requireHost skips a test that needs root and containerd, runc and
// busybox on a host that lacks them; with CI=true it fails instead.
func requireHost(tb testing.TB) {
	tb.Helper()
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	for _, bin := range []string{"containerd", "runc", busyboxPath} {
		if _, err := exec.LookPath(bin); err != nil {
			missing = append(missing, bin)
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := "containerd driver tests need " + strings.Join(missing, ", ")
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg + "; skipping (CI=true makes this a failure)")
}

// setupEnv returns the shared environment, starting it on first use.
func setupEnv(tb testing.TB) *testEnv {
	tb.Helper()
	requireHost(tb)
	envOnce.Do(func() { sharedEnv, envErr = newTestEnv() })
	if envErr != nil {
		tb.Fatal(envErr)
	}
	return sharedEnv
}

func newTestEnv() (*testEnv, error) {
	dir, err := os.MkdirTemp("", "ctrd") // short: the socket lives here
	if err != nil {
		return nil, err
	}
	e := &testEnv{dir: dir, archive: filepath.Join(dir, "busybox.tar")}
	if e.image, err = buildImage(nil); err != nil {
		return e, err
	}
	if err := e.image.writeArchive(e.archive, testImageName); err != nil {
		return e, err
	}
	e.daemon, err = startDaemon(dir, fmt.Sprintf("troupe-test-%d", os.Getpid()))
	return e, err
}

// teardown removes every container of the test namespace, stops
// containerd and the registry and removes their files.
func teardown() error {
	e := sharedEnv
	if e == nil {
		return nil
	}
	var errs []error
	if e.daemon != nil {
		d := New(Config{Address: e.daemon.sock, Namespace: e.daemon.ns})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		errs = append(errs, d.Cleanup(ctx, func(string) bool { return false }))
		cancel()
		d.Shutdown()
		errs = append(errs, e.daemon.stop())
		e.daemon.removeHostState()
	}
	if e.registry != nil {
		e.registry.stop()
	}
	errs = append(errs, os.RemoveAll(e.dir))
	return errors.Join(errs...)
}

// reg returns the registry, starting it on first use.
func (e *testEnv) reg(tb testing.TB) *registry {
	tb.Helper()
	if _, err := os.Stat(registryPath); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatal(err)
		}
		tb.Skipf("registry test needs %s: %v", registryPath, err)
	}
	e.regOnce.Do(func() { e.registry, e.regErr = startRegistry(e.dir, false) })
	if e.regErr != nil {
		tb.Fatal(e.regErr)
	}
	return e.registry
}

// newDriver returns a driver on the shared containerd, shut down when the
// test ends.
func (e *testEnv) newDriver(tb testing.TB) *Driver {
	d := New(Config{Address: e.daemon.sock, Namespace: e.daemon.ns, Logger: testLogger(tb),
		RequestTimeout: 20 * time.Second})
	tb.Cleanup(d.Shutdown)
	return d
}

func testLogger(tb testing.TB) *slog.Logger {
	if _, ok := tb.(*testing.B); ok {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

var nonIDChars = regexp.MustCompile(`[^A-Za-z0-9]+`)

// taskConfig runs script under the image's sh, in a fresh task dir.
func (e *testEnv) taskConfig(tb testing.TB, script string) *driver.TaskConfig {
	dir := tb.TempDir()
	alloc := strings.ToLower(nonIDChars.ReplaceAllString(tb.Name(), "-"))
	return &driver.TaskConfig{
		ID: alloc + "/task", AllocID: alloc, TaskName: "task", TaskDir: dir,
		StdoutPath: filepath.Join(dir, "stdout"), StderrPath: filepath.Join(dir, "stderr"),
		Env: map[string]string{"PATH": "/bin"},
		Config: map[string]any{"image": ArchiveScheme + e.archive, "command": "/bin/sh",
			"args": []any{"-c", script}},
	}
}

// start starts cfg on d and removes its container when the test ends
// (before its task dir goes).
func (e *testEnv) start(tb testing.TB, d *Driver, cfg *driver.TaskConfig) *driver.TaskHandle {
	tb.Helper()
	h, err := d.StartTask(context.Background(), cfg)
	require.NoError(tb, err)
	e.removeAtEnd(tb, cfg.ID)
	return h
}

// removeAtEnd removes taskID's container, if any, when the test ends.
func (e *testEnv) removeAtEnd(tb testing.TB, taskID string) {
	tb.Cleanup(func() {
		cl, ctx := e.client(tb)
		c, err := cl.LoadContainer(ctx, ContainerID(taskID))
		if err == nil {
			require.NoError(tb, removeContainer(ctx, c))
		}
	})
}

// client is a raw containerd client in the test namespace.
func (e *testEnv) client(tb testing.TB) (*client.Client, context.Context) {
	cl, ctx, err := e.daemon.client()
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = cl.Close() })
	return cl, ctx
}

// containers lists the namespace's container ids.
func (e *testEnv) containers(tb testing.TB) []string {
	cl, ctx := e.client(tb)
	cs, err := cl.Containers(ctx)
	require.NoError(tb, err)
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		ids = append(ids, c.ID())
	}
	slices.Sort(ids)
	return ids
}

// activeSnapshots lists the keys of the namespace's active snapshots.
func (e *testEnv) activeSnapshots(tb testing.TB) []string {
	cl, ctx := e.client(tb)
	var keys []string
	err := cl.SnapshotService(DefaultSnapshotter).Walk(ctx, func(_ context.Context, info snapshots.Info) error {
		if info.Kind == snapshots.KindActive {
			keys = append(keys, info.Name)
		}
		return nil
	})
	require.NoError(tb, err)
	slices.Sort(keys)
	return keys
}

// taskStatus is the status containerd reports for taskID's task.
func (e *testEnv) taskStatus(tb testing.TB, taskID string) client.Status {
	cl, ctx := e.client(tb)
	c, err := cl.LoadContainer(ctx, ContainerID(taskID))
	require.NoError(tb, err)
	tsk, err := c.Task(ctx, nil)
	require.NoError(tb, err)
	st, err := tsk.Status(ctx)
	require.NoError(tb, err)
	return st
}

// result waits for taskID's exit result.
func result(tb testing.TB, d *Driver, taskID string) *driver.ExitResult {
	tb.Helper()
	ch, err := d.WaitTask(context.Background(), taskID)
	require.NoError(tb, err)
	return recv(tb, ch)
}

// recv reads one result and checks that the channel then closes.
func recv(tb testing.TB, ch <-chan *driver.ExitResult) *driver.ExitResult {
	tb.Helper()
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case r := <-ch:
		_, open := <-ch
		require.False(tb, open, "the wait channel must close after its result")
		return r
	case <-timer.C:
		tb.Fatal("no exit result")
		return nil
	}
}

// waitOutput waits until path holds want.
func waitOutput(tb testing.TB, path, want string) {
	tb.Helper()
	require.EventuallyWithT(tb, func(c *assert.CollectT) {
		data, err := os.ReadFile(path)
		require.NoError(c, err)
		require.Equal(c, want, string(data))
	}, 15*time.Second, 10*time.Millisecond)
}
