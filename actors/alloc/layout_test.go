package alloc

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

func layoutAlloc(drv string, plugin bool) (*messages.Allocation, *messages.Task) {
	a := testAlloc("service", map[string]any{}, nil)
	task := groupOf(a).GetTasks()[0]
	task.Driver = drv
	task.VolumeMounts = []*messages.VolumeMount{{Volume: "vol0", Destination: "/data/v0"}}
	groupOf(a).Volumes = map[string]*messages.VolumeRequest{"vol0": {Name: "vol0", Type: "csi", Source: "vol0"}}
	if plugin {
		task.CSIPluginConfig = &messages.CSIPluginConfig{ID: "p", Type: "node", MountDir: "/csi"}
	}
	return a, task
}

func TestAllocDirLayout(t *testing.T) {
	root := t.TempDir()
	a, _ := layoutAlloc("exec", false)
	require.NoError(t, (&AllocDirHook{Root: root}).Prerun(context.Background(), a))
	for dir, mode := range map[string]os.FileMode{
		"alloc": 0o755, "alloc/logs": 0o755, "alloc/data": 0o777, "alloc/tmp": 0o777 | os.ModeSticky,
		"t": 0o755, "t/local": 0o777, "t/secrets": 0o700, "t/tmp": 0o777 | os.ModeSticky,
	} {
		fi, err := os.Stat(filepath.Join(root, a.GetID(), dir))
		require.NoError(t, err, dir)
		require.Equal(t, os.ModeDir|mode, fi.Mode(), dir)
	}
	require.Equal(t, filepath.Join(root, a.GetID(), "alloc", "logs", "t.stderr"), LogPath(root, a.GetID(), "t", "stderr"))
}

func TestTaskConfigIsolation(t *testing.T) {
	root := "/var/troupe/alloc"
	vols := map[string]*messages.AllocVolumeState{"vol0": {TargetPath: "/csi/publish/vol0"}}
	tests := []struct {
		name           string
		driver         string
		plugin         bool
		wantIsolation  *driver.Isolation
		wantDirs       [3]string // alloc, task, secrets
		wantVolumePath string
	}{
		{"exec", "exec", false,
			&driver.Isolation{AllocDir: root + "/A/alloc", Mounts: []driver.Mount{{Source: "/csi/publish/vol0", Destination: "/data/v0"}}},
			[3]string{"/alloc", "/local", "/secrets"}, "/data/v0"},
		{"exec csi plugin", "exec", true, nil,
			[3]string{root + "/A/alloc", root + "/A/t/local", root + "/A/t/secrets"}, root + "/A/t/data/v0"},
		{"java", "java", false,
			&driver.Isolation{AllocDir: root + "/A/alloc", Mounts: []driver.Mount{{Source: "/csi/publish/vol0", Destination: "/data/v0"}}},
			[3]string{"/alloc", "/local", "/secrets"}, "/data/v0"},
		{"java csi plugin", "java", true, nil,
			[3]string{root + "/A/alloc", root + "/A/t/local", root + "/A/t/secrets"}, root + "/A/t/data/v0"},
		{"raw_exec", "raw_exec", false, nil,
			[3]string{root + "/A/alloc", root + "/A/t/local", root + "/A/t/secrets"}, root + "/A/t/data/v0"},
		{"containerd", "containerd", false, &driver.Isolation{AllocDir: root + "/A/alloc"},
			[3]string{"/alloc", "/local", "/secrets"}, "/data/v0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, task := layoutAlloc(tt.driver, tt.plugin)
			a.ID = "A"
			cfg := taskConfig(root, nil, a, task, nil, vols)
			require.Equal(t, tt.wantIsolation, cfg.Isolation)
			require.Equal(t, tt.wantDirs, [3]string{cfg.Env["NOMAD_ALLOC_DIR"], cfg.Env["NOMAD_TASK_DIR"], cfg.Env["NOMAD_SECRETS_DIR"]})
			require.Equal(t, tt.wantVolumePath, cfg.Env["TROUPE_VOLUME_VOL0"])
			require.Equal(t, root+"/A/alloc/logs/t.stdout", cfg.StdoutPath)
		})
	}
}
