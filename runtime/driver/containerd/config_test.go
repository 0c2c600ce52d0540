package containerd

import (
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

func TestParseTaskSpec(t *testing.T) {
	base := func(kv ...any) *driver.TaskConfig {
		m := map[string]any{"image": "busybox"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return &driver.TaskConfig{ID: "a/t", TaskDir: "/srv/alloc/t", Config: m}
	}
	tests := []struct {
		name    string
		cfg     *driver.TaskConfig
		check   func(t *testing.T, s *taskSpec)
		wantErr string
	}{
		{name: "registry image is normalised", cfg: base(), check: func(t *testing.T, s *taskSpec) {
			require.Equal(t, "docker.io/library/busybox:latest", s.Image)
			require.Empty(t, s.ArchivePath)
			require.Equal(t, NetworkHost, s.NetworkMode)
		}},
		{name: "private registry", cfg: base("image", "127.0.0.1:5000/x/y:1", "insecure", true,
			"auth", map[string]any{"username": "u", "password": "p"}), check: func(t *testing.T, s *taskSpec) {
			require.Equal(t, "127.0.0.1:5000/x/y:1", s.Image)
			require.True(t, s.Insecure)
			require.Equal(t, &auth{Username: "u", Password: "p"}, s.Auth)
		}},
		{name: "absolute archive", cfg: base("image", "oci-archive:///srv/img.tar", "image_name", "x:1"),
			check: func(t *testing.T, s *taskSpec) {
				require.Equal(t, "/srv/img.tar", s.ArchivePath)
				require.Equal(t, "x:1", s.ImageName)
			}},
		{name: "relative archive is in the task dir", cfg: base("image", "oci-archive://local/img.tar"),
			check: func(t *testing.T, s *taskSpec) {
				require.Equal(t, "/srv/alloc/t/local/img.tar", s.ArchivePath)
			}},
		{name: "command and args", cfg: base("command", "/bin/sh", "args", []any{"-c", "x"}),
			check: func(t *testing.T, s *taskSpec) {
				require.Equal(t, "/bin/sh", s.Command)
				require.Equal(t, []string{"-c", "x"}, s.Args)
			}},
		{name: "mounts of both forms", cfg: base(
			"mounts", []any{map[string]any{"type": "tmpfs", "source": "tmpfs", "target": "/t", "options": []any{"size=1m"}}},
			"volume_mounts", []any{map[string]any{"source": "/v", "target": "/data", "readonly": true}}),
			check: func(t *testing.T, s *taskSpec) {
				require.Equal(t, []specs.Mount{
					{Type: "tmpfs", Source: "tmpfs", Destination: "/t", Options: []string{"size=1m"}},
					{Type: "bind", Source: "/v", Destination: "/data", Options: []string{"rbind", "ro"}},
				}, s.Mounts)
			}},
		{name: "devices", cfg: base("devices", []any{"/dev/fuse",
			map[string]any{"path": "/dev/nvidia0", "container_path": "/dev/gpu0", "permissions": "rw"}}),
			check: func(t *testing.T, s *taskSpec) {
				require.Equal(t, []device{{Path: "/dev/fuse", ContainerPath: "/dev/fuse", Permissions: "rwm"},
					{Path: "/dev/nvidia0", ContainerPath: "/dev/gpu0", Permissions: "rw"}}, s.Devices)
			}},
		{name: "netns", cfg: base("netns_path", "/var/run/netns/x", "privileged", true),
			check: func(t *testing.T, s *taskSpec) {
				require.Equal(t, "/var/run/netns/x", s.NetnsPath)
				require.Empty(t, s.NetworkMode)
				require.True(t, s.Privileged)
			}},
		{name: "no image", cfg: &driver.TaskConfig{ID: "a/t"}, wantErr: `"image" is required`},
		{name: "bad image", cfg: base("image", "Busybox"), wantErr: `"image" "Busybox"`},
		{name: "unknown key", cfg: base("imagee", "x"), wantErr: `unknown key "imagee"`},
		{name: "wrong type", cfg: base("privileged", "yes"), wantErr: `"privileged" is a string, not a bool`},
		{name: "args not strings", cfg: base("args", []any{1.0}), wantErr: `"args" is a float64`},
		{name: "relative target", cfg: base("volume_mounts", []any{map[string]any{"source": "/v", "target": "data"}}),
			wantErr: `"volume_mounts"[0]: target "data" is not an absolute path`},
		{name: "relative bind source", cfg: base("mounts", []any{map[string]any{"source": "v", "target": "/d"}}),
			wantErr: `bind source "v"`},
		{name: "mount not an object", cfg: base("mounts", []any{"x"}), wantErr: "element 0 is a string"},
		{name: "bad permissions", cfg: base("devices", []any{map[string]any{"path": "/dev/x", "permissions": "rx"}}),
			wantErr: `permissions "rx"`},
		{name: "netns and mode", cfg: base("netns_path", "/n", "network_mode", "none"), wantErr: "exclude each other"},
		{name: "bad mode", cfg: base("network_mode", "bridge"), wantErr: `"network_mode" "bridge"`},
		{name: "bad auth", cfg: base("auth", "u:p"), wantErr: `"auth" is a string`},
		{name: "no id", cfg: &driver.TaskConfig{}, wantErr: "a task id is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parseTaskSpec(tt.cfg)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, driver.ErrInvalidConfig)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, s)
		})
	}
}

func TestContainerID(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct{ in, want string }{
		{"0b3e2c1a-5d6f-4a7b-8c9d-0e1f2a3b4c5d/web", "0b3e2c1a-5d6f-4a7b-8c9d-0e1f2a3b4c5d-web"},
		{"alloc/my_task.v2", "alloc-my_task.v2"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, ContainerID(tt.in))
	}
	// Ids that need changes beyond "/" get a hash, so they stay distinct.
	for _, in := range []string{"alloc/a b", "alloc/a  b", "alloc/a-b ", "/x", "alloc/" + long, "alloc/" + long + "y", "ü"} {
		id := ContainerID(in)
		require.Regexp(t, `^[A-Za-z0-9]+([._-][A-Za-z0-9]+)*$`, id, in)
		require.LessOrEqual(t, len(id), maxIDLength, in)
		require.Equal(t, id, ContainerID(in), "stable")
	}
	require.NotEqual(t, ContainerID("alloc/a b"), ContainerID("alloc/a  b"))
	require.NotEqual(t, ContainerID("alloc/"+long), ContainerID("alloc/"+long+"y"))
}

func TestResources(t *testing.T) {
	require.Zero(t, cpuShares(0))
	require.Equal(t, uint64(2), cpuShares(1))
	require.Equal(t, uint64(512), cpuShares(500))
	require.Equal(t, uint64(2048), cpuShares(2000))

	tests := []struct {
		mem, max, wantLimit, wantReservation int64
	}{
		{0, 0, 0, 0},
		{256, 0, 256 << 20, 0},
		{256, 512, 512 << 20, 256 << 20},
		{0, 512, 512 << 20, 0},
		{512, 256, 256 << 20, 0}, // a max below the soft limit wins
	}
	for _, tt := range tests {
		limit, res := memoryLimits(&driver.TaskConfig{MemoryMB: tt.mem, MemoryMaxMB: tt.max})
		require.Equal(t, tt.wantLimit, limit, "%+v", tt)
		require.Equal(t, tt.wantReservation, res, "%+v", tt)
	}
}
