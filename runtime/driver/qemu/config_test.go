//go:build linux

package qemu

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		err  string
	}{
		{"minimal", map[string]any{"image_path": "disk.img"}, ""},
		{"everything", map[string]any{"image_path": "d", "accelerator": "kvm", "drive_interface": "virtio",
			"args": []any{"-kernel", "k"}, "port_map": map[string]any{"http": float64(8080)}, "graceful_shutdown": true}, ""},
		{"no image", map[string]any{}, "image_path must be a non-empty string"},
		{"bad accelerator", map[string]any{"image_path": "d", "accelerator": "hvf"}, `accelerator must be "tcg" or "kvm"`},
		{"bad args", map[string]any{"image_path": "d", "args": []any{"-m", float64(3)}}, "args[1] must be a string"},
		{"bad port", map[string]any{"image_path": "d", "port_map": map[string]any{"http": float64(70000)}}, "port_map.http must be a port number"},
		{"bad graceful", map[string]any{"image_path": "d", "graceful_shutdown": "yes"}, "graceful_shutdown must be a bool"},
		{"unknown key", map[string]any{"image_path": "d", "guest_agent": true}, `unknown config key "guest_agent"`},
		{"bad interface", map[string]any{"image_path": "d", "drive_interface": "nvme"}, "drive_interface must be one of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseSpec(tc.cfg)
			if tc.err == "" {
				require.NoError(t, err)
				require.NotNil(t, s)
				return
			}
			require.ErrorIs(t, err, driver.ErrInvalidConfig)
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func TestParseSpecDefaults(t *testing.T) {
	s, err := parseSpec(map[string]any{"image_path": "d"})
	require.NoError(t, err)
	require.Equal(t, "tcg", s.Accelerator) // Nomad's default
	require.Equal(t, "ide", s.DriveInterface)
	require.False(t, s.Graceful)
}

func TestResolveImage(t *testing.T) {
	task := "/data/alloc/a1/web"
	for _, tc := range []struct {
		path, want, err string
	}{
		{"local/disk.img", "/data/alloc/a1/web/local/disk.img", ""},
		{"../alloc/disk.img", "", "leaves the task dir"},
		{"/data/alloc/a1/alloc/disk.img", "/data/alloc/a1/alloc/disk.img", ""},
		{"/images/base.qcow2", "/images/base.qcow2", ""},
		{"/images/../etc/shadow", "", "not in the allocation dir"},
		{"/data/alloc/a2/web/disk.img", "", "not in the allocation dir"},
	} {
		got, err := resolveImage(tc.path, task, []string{"/images"})
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.path)
			continue
		}
		require.NoError(t, err, tc.path)
		require.Equal(t, tc.want, got)
	}
}

func TestQemuArgs(t *testing.T) {
	cfg := &driver.TaskConfig{TaskName: "vm", MemoryMB: 256, CPU: 2500,
		Env: map[string]string{"NOMAD_HOST_PORT_http": "23456", "NOMAD_HOST_IP_http": "127.0.0.1"}}
	s, err := parseSpec(map[string]any{"image_path": "d", "port_map": map[string]any{"http": float64(8080)},
		"args": []any{"-kernel", "/boot/k"}})
	require.NoError(t, err)
	args, err := qemuArgs(cfg, s, vmLayout{Image: "/t/d", Monitor: "/t/m.sock", PidFile: "/t/p"}, 2000, 4)
	require.NoError(t, err)
	joined := strings.Join(args, " ")
	for _, want := range []string{"-machine type=pc,accel=tcg", "-m 256M", "-smp 2", "-drive file=/t/d,if=ide",
		"-display none", "-chardev stdio,id=troupe-serial,signal=off", "-serial chardev:troupe-serial",
		"-monitor unix:/t/m.sock,server,nowait", "-pidfile /t/p",
		"-netdev user,id=user.0,hostfwd=tcp:127.0.0.1:23456-:8080,hostfwd=udp:127.0.0.1:23456-:8080",
		"-device virtio-net-pci,netdev=user.0"} {
		require.Contains(t, joined, want)
	}
	require.Equal(t, []string{"-kernel", "/boot/k"}, args[len(args)-2:], "the task's args come last")

	cfg.Env = nil
	_, err = qemuArgs(cfg, s, vmLayout{}, 2000, 4)
	require.ErrorIs(t, err, driver.ErrInvalidConfig)
	require.ErrorContains(t, err, `no port labelled "http"`)
}

func TestVCPUs(t *testing.T) {
	require.Equal(t, 1, vcpus(100, 2000, 8))
	require.Equal(t, 2, vcpus(2001, 2000, 8))
	require.Equal(t, 2, vcpus(100000, 2000, 2))
	require.Equal(t, 1, vcpus(0, 0, 0))
}

func TestMonitorPathShort(t *testing.T) {
	short := &driver.TaskConfig{TaskDir: "/d/a/t"}
	require.Equal(t, "/d/a/t/qemu-monitor.sock", monitorPath(short))
	long := &driver.TaskConfig{TaskDir: "/" + strings.Repeat("x", 120)}
	p := monitorPath(long)
	require.LessOrEqual(t, len(p), maxSocketPath)
	require.Equal(t, p, monitorPath(long), "stable across calls (recover finds it)")
	require.NotEqual(t, p, monitorPath(&driver.TaskConfig{TaskDir: filepath.Join(long.TaskDir, "y")}))
}
