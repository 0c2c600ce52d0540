//go:build linux

package containerd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/driver/containerd/ctrdtest"
	"github.com/troupe-dev/troupe/runtime/logmon"
)

// testEnv is what the package's tests share: one containerd, the test
// image as an archive, and (started when a test asks) a registry.
type testEnv struct {
	dir     string
	daemon  *ctrdtest.Daemon
	archive string

	regOnce  sync.Once
	registry *ctrdtest.Registry
	regErr   error
}

var (
	envOnce   sync.Once
	sharedEnv *testEnv
	envErr    error
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == logmon.Command { // the shim runs us as a task's log forwarder
		os.Exit(logmon.Main(os.Args[2:]))
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if err := teardown(); err != nil {
			fmt.Fprintln(os.Stderr, "teardown:", err)
			code = max(code, 1)
		}
		os.Exit(code)
	}))
}

// setupEnv returns the shared environment, starting it on first use. It
// skips tb on a host without root, containerd, runc or busybox (fails
// with CI=true).
func setupEnv(tb testing.TB) *testEnv {
	tb.Helper()
	ctrdtest.RequireHost(tb, ctrdtest.BusyboxPath)
	envOnce.Do(func() { sharedEnv, envErr = newTestEnv() })
	if envErr != nil {
		tb.Fatal(envErr)
	}
	return sharedEnv
}

func newTestEnv() (*testEnv, error) {
	dir, err := os.MkdirTemp("", "ctrdenv")
	if err != nil {
		return nil, err
	}
	e := &testEnv{dir: dir, archive: filepath.Join(dir, "busybox.tar")}
	img, err := ctrdtest.BuildImage(nil)
	if err != nil {
		return e, err
	}
	if err := img.WriteArchive(e.archive, ctrdtest.BusyboxImage); err != nil {
		return e, err
	}
	e.daemon, err = ctrdtest.NewDaemon()
	return e, err
}

// teardown stops containerd (killing what still runs on it) and the
// registry and removes their files.
func teardown() error {
	e := sharedEnv
	if e == nil {
		return nil
	}
	var errs []error
	if e.daemon != nil {
		errs = append(errs, e.daemon.Close())
	}
	if e.registry != nil {
		e.registry.Close()
	}
	errs = append(errs, os.RemoveAll(e.dir))
	return errors.Join(errs...)
}

// reg returns the shared registry, starting it on first use.
func (e *testEnv) reg(tb testing.TB) *ctrdtest.Registry {
	tb.Helper()
	ctrdtest.RequireTools(tb, ctrdtest.RegistryPath)
	e.regOnce.Do(func() { e.registry, e.regErr = ctrdtest.NewRegistry(e.dir, false) })
	if e.regErr != nil {
		tb.Fatal(e.regErr)
	}
	return e.registry
}

// newDriver returns a driver on the shared containerd, shut down when the
// test ends.
func (e *testEnv) newDriver(tb testing.TB) *Driver {
	d := New(Config{Address: e.daemon.Address(), Namespace: e.daemon.Namespace(), Logger: testLogger(tb),
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
	return e.daemon.Client(tb)
}

// containers lists the namespace's container ids.
func (e *testEnv) containers(tb testing.TB) []string { return e.daemon.Containers(tb) }

// activeSnapshots lists the keys of the namespace's active snapshots.
func (e *testEnv) activeSnapshots(tb testing.TB) []string {
	return e.daemon.ActiveSnapshots(tb, DefaultSnapshotter)
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
