//go:build linux

package containerd

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/driver/containerd/ctrdtest"
)

func TestStartLogsAndExitCode(t *testing.T) {
	e := setupEnv(t)
	d := e.newDriver(t)
	cfg := e.taskConfig(t, `echo "out $FOO"; echo err >&2; exit 3`)
	cfg.Env["FOO"] = "bar baz"
	h := e.start(t, d, cfg)
	require.Equal(t, Name, h.Driver)
	require.Equal(t, cfg.ID, h.TaskID)
	require.Positive(t, h.Pid)

	r := result(t, d, cfg.ID)
	require.NoError(t, r.Err)
	require.Equal(t, 3, r.ExitCode)
	require.Zero(t, r.Signal)
	require.False(t, r.OOMKilled)
	waitOutput(t, cfg.StdoutPath, "out bar baz\n")
	waitOutput(t, cfg.StderrPath, "err\n")
	// A second wait gets the same result at once.
	require.Equal(t, 3, result(t, d, cfg.ID).ExitCode)

	// Destroy removes the container and its snapshot.
	cid := ContainerID(cfg.ID)
	require.Contains(t, e.containers(t), cid)
	require.Contains(t, e.activeSnapshots(t), cid)
	require.NoError(t, d.DestroyTask(context.Background(), cfg.ID, false))
	require.NotContains(t, e.containers(t), cid)
	require.NotContains(t, e.activeSnapshots(t), cid)
	_, err := d.WaitTask(context.Background(), cfg.ID)
	require.ErrorIs(t, err, driver.ErrTaskNotFound)
}

func TestStopTask(t *testing.T) {
	tests := []struct {
		name        string
		trap        string
		timeout     time.Duration
		wantCode    int
		wantSignal  int
		minDuration time.Duration
	}{
		// The task exits on SIGTERM: no SIGKILL.
		{name: "graceful", trap: "echo term; exit 7", timeout: 20 * time.Second, wantCode: 7},
		// The task ignores SIGTERM: SIGKILL after the timeout.
		{name: "escalates", trap: "echo term", timeout: 500 * time.Millisecond, wantCode: 137,
			wantSignal: 9, minDuration: 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setupEnv(t)
			d := e.newDriver(t)
			cfg := e.taskConfig(t, `trap '`+tt.trap+`' TERM; echo ready; while true; do sleep 0.05; done`)
			e.start(t, d, cfg)
			waitOutput(t, cfg.StdoutPath, "ready\n")

			begin := time.Now()
			require.NoError(t, d.StopTask(context.Background(), cfg.ID, tt.timeout, "SIGTERM"))
			took := time.Since(begin)
			r := result(t, d, cfg.ID)
			require.Equal(t, tt.wantCode, r.ExitCode)
			require.Equal(t, tt.wantSignal, r.Signal)
			require.GreaterOrEqual(t, took, tt.minDuration)
			require.Less(t, took, 10*time.Second)
			waitOutput(t, cfg.StdoutPath, "ready\nterm\n") // SIGTERM came first
			// Stopping an exited task is a no-op.
			require.NoError(t, d.StopTask(context.Background(), cfg.ID, time.Second, ""))
		})
	}
}

func TestSignalTask(t *testing.T) {
	e := setupEnv(t)
	d := e.newDriver(t)
	cfg := e.taskConfig(t, `trap 'echo usr1; exit 0' USR1; echo ready; while true; do sleep 0.05; done`)
	e.start(t, d, cfg)
	waitOutput(t, cfg.StdoutPath, "ready\n")
	require.ErrorIs(t, d.SignalTask(context.Background(), cfg.ID, "BOGUS"), driver.ErrUnknownSignal)
	require.NoError(t, d.SignalTask(context.Background(), cfg.ID, "SIGUSR1"))
	require.True(t, result(t, d, cfg.ID).Successful())
	waitOutput(t, cfg.StdoutPath, "ready\nusr1\n")
	require.ErrorIs(t, d.SignalTask(context.Background(), cfg.ID, "SIGUSR1"), driver.ErrTaskNotFound)
}

func TestOOMKilled(t *testing.T) {
	e := setupEnv(t)
	d := e.newDriver(t)
	cfg := e.taskConfig(t, `x=a; while true; do x=$x$x; done`)
	cfg.MemoryMB = 16
	e.start(t, d, cfg)
	r := result(t, d, cfg.ID)
	require.NoError(t, r.Err)
	require.True(t, r.OOMKilled, "result %+v", r)
	require.Equal(t, 9, r.Signal)
	require.Equal(t, 137, r.ExitCode)
	require.False(t, r.Successful())
}

func TestSpecFromConfig(t *testing.T) {
	e := setupEnv(t)
	d := e.newDriver(t)
	vol := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(vol, "hello"), []byte("from the volume\n"), 0o644))
	cfg := e.taskConfig(t, `cat /data/hello; ls /dev/fuse; touch /data/x 2>/dev/null || echo ro; `+
		`touch /scratch/x && echo tmpfs; id -u; cat /local/marker`)
	require.NoError(t, os.WriteFile(filepath.Join(cfg.TaskDir, "marker"), []byte("task dir\n"), 0o644))
	cfg.CPU, cfg.MemoryMB, cfg.MemoryMaxMB = 500, 32, 64
	cfg.User = "nobody"
	cfg.Config["volume_mounts"] = []any{map[string]any{"source": vol, "target": "/data", "readonly": true}}
	cfg.Config["mounts"] = []any{map[string]any{"type": "tmpfs", "source": "tmpfs", "target": "/scratch",
		"options": []any{"mode=1777"}}}
	cfg.Config["devices"] = []any{"/dev/fuse"}
	require.NoError(t, os.Chmod(cfg.TaskDir, 0o755))
	e.start(t, d, cfg)
	r := result(t, d, cfg.ID)
	require.True(t, r.Successful(), "result %+v; stderr: %s", r, readFile(t, cfg.StderrPath))
	waitOutput(t, cfg.StdoutPath, "from the volume\n/dev/fuse\nro\ntmpfs\n65534\ntask dir\n")

	cl, ctx := e.client(t)
	c, err := cl.LoadContainer(ctx, ContainerID(cfg.ID))
	require.NoError(t, err)
	spec, err := c.Spec(ctx)
	require.NoError(t, err)
	res := spec.Linux.Resources
	require.Equal(t, int64(64<<20), *res.Memory.Limit)
	require.Equal(t, int64(32<<20), *res.Memory.Reservation)
	require.Equal(t, uint64(512), *res.CPU.Shares)
	require.Contains(t, devicePaths(spec.Linux.Devices), "/dev/fuse")
	labels, err := c.Labels(ctx)
	require.NoError(t, err)
	require.Equal(t, cfg.ID, labels[LabelTaskID])
}

func TestStartTaskIsIdempotent(t *testing.T) {
	e := setupEnv(t)
	d := e.newDriver(t)
	cfg := e.taskConfig(t, `echo run; while [ ! -e /local/stop ]; do sleep 0.05; done`)
	e.start(t, d, cfg)
	_, err := d.StartTask(context.Background(), cfg)
	require.ErrorIs(t, err, driver.ErrTaskAlreadyStarted)
	// A driver that did not recover the task still sees it run.
	_, err = e.newDriver(t).StartTask(context.Background(), cfg)
	require.ErrorIs(t, err, driver.ErrTaskAlreadyStarted)

	require.NoError(t, os.WriteFile(filepath.Join(cfg.TaskDir, "stop"), nil, 0o644))
	require.True(t, result(t, d, cfg.ID).Successful())
	// The exited container is stale: a new start (here by a fresh
	// driver) replaces it, and the logs append.
	d2 := e.newDriver(t)
	_, err = d2.StartTask(context.Background(), cfg)
	require.NoError(t, err)
	require.True(t, result(t, d2, cfg.ID).Successful())
	waitOutput(t, cfg.StdoutPath, "run\nrun\n")
	require.Equal(t, 1, strings.Count(strings.Join(e.containers(t), ","), ContainerID(cfg.ID)))
}

func TestImageAndStartErrors(t *testing.T) {
	e := setupEnv(t)
	reg := e.reg(t)
	closed, err := ctrdtest.FreeAddr()
	require.NoError(t, err)
	tests := []struct {
		name    string
		image   string
		command string
		wantErr error
		wantMsg string
	}{
		{name: "unknown image", image: reg.Addr() + "/nope:missing", wantErr: ErrImagePull, wantMsg: "not found"},
		{name: "unreachable registry", image: closed + "/busybox:test", wantErr: ErrImagePull,
			wantMsg: "connection refused"},
		{name: "missing archive", image: ArchiveScheme + "/nonexistent/img.tar", wantErr: ErrImageImport,
			wantMsg: "no such file"},
		{name: "bad command", command: "/bin/nope", wantErr: ErrTaskStart, wantMsg: "/bin/nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := e.newDriver(t)
			cfg := e.taskConfig(t, "true")
			if tt.image != "" {
				cfg.Config["image"] = tt.image
			}
			if tt.command != "" {
				cfg.Config["command"] = tt.command
			}
			e.removeAtEnd(t, cfg.ID)
			_, err := d.StartTask(context.Background(), cfg)
			require.ErrorIs(t, err, tt.wantErr)
			require.ErrorContains(t, err, tt.wantMsg)
			cid := ContainerID(cfg.ID)
			require.NotContains(t, e.containers(t), cid)
			require.NotContains(t, e.activeSnapshots(t), cid)
			_, err = d.WaitTask(context.Background(), cfg.ID)
			require.ErrorIs(t, err, driver.ErrTaskNotFound)
		})
	}
	t.Run("invalid config", func(t *testing.T) {
		cfg := e.taskConfig(t, "true")
		cfg.Config["imagee"] = "typo"
		_, err := e.newDriver(t).StartTask(context.Background(), cfg)
		require.ErrorIs(t, err, driver.ErrInvalidConfig)
		require.ErrorContains(t, err, `"imagee"`)
	})
}

func TestPullFromRegistry(t *testing.T) {
	e := setupEnv(t)
	reg := e.reg(t)
	// Its own layer, so the pull must fetch it from the registry.
	img, err := ctrdtest.BuildImage(map[string]string{"etc/pulled": "from the registry\n"})
	require.NoError(t, err)
	require.NoError(t, reg.Push(img, "busybox", "pulled"))
	ref := reg.Addr() + "/busybox:pulled"

	d := e.newDriver(t)
	cfg := e.taskConfig(t, "cat /etc/pulled")
	cfg.Config["image"] = ref
	h := e.start(t, d, cfg)
	r := result(t, d, cfg.ID)
	require.True(t, r.Successful(), "result %+v; stderr: %s", r, readFile(t, cfg.StderrPath))
	waitOutput(t, cfg.StdoutPath, "from the registry\n")
	require.Contains(t, string(h.State), ref)

	cl, ctx := e.client(t)
	pulled, err := cl.GetImage(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, img.Digest(), pulled.Target().Digest)
}

func TestFingerprint(t *testing.T) {
	e := setupEnv(t)
	cl, ctx := e.client(t)
	v, err := cl.Version(ctx)
	require.NoError(t, err)
	fp := e.newDriver(t).Fingerprint(context.Background())
	require.True(t, fp.Detected)
	require.True(t, fp.Healthy, fp.HealthDescription)
	require.Equal(t, map[string]string{"driver.containerd": "1", "driver.containerd.version": v.Version},
		fp.Attributes)
}

func readFile(tb testing.TB, path string) string {
	data, err := os.ReadFile(path)
	require.NoError(tb, err)
	return string(data)
}

func devicePaths(devs []specs.LinuxDevice) []string {
	out := make([]string, 0, len(devs))
	for _, d := range devs {
		out = append(out, d.Path)
	}
	return out
}

func TestFingerprintUnreachable(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "missing.sock")
	d := New(Config{Address: sock, RequestTimeout: 5 * time.Second})
	defer d.Shutdown()
	fp := d.Fingerprint(context.Background())
	require.False(t, fp.Detected)
	require.False(t, fp.Healthy)
	require.Contains(t, fp.HealthDescription, sock)
	require.Contains(t, fp.HealthDescription, ErrUnavailable.Error())

	// A socket nobody serves.
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	require.NoError(t, err)
	l.SetUnlinkOnClose(false)
	require.NoError(t, l.Close())
	require.FileExists(t, sock)
	fp = d.Fingerprint(context.Background())
	require.False(t, fp.Detected)
	require.Contains(t, fp.HealthDescription, sock)
	require.Contains(t, fp.HealthDescription, "connection refused")
}
