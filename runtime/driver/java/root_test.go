package java

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// TestIsolatedPaths: in an isolated task a relative jar_path or
// class_path entry is relative to the task dir as the task sees it
// (local/app.jar is /local/app.jar), an absolute one must be visible in
// its root, and a JVM outside chroot_env is bound in read-only while one
// beneath it runs at its path in the root.
func TestIsolatedPaths(t *testing.T) {
	t.Setenv("TMPDIR", "/var/tmp") // a JVM home under /tmp would be hidden by the task's /tmp
	home := fakeJava(t)
	taskDir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(taskDir, "local"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(taskDir, "local", "app.jar"), nil, 0o644))
	iso := &driver.Isolation{AllocDir: "/a/alloc", Mounts: []driver.Mount{{Source: "/vol", Destination: "/data"}}}
	d := New(Config{JavaHome: home, ChrootEnv: map[string]string{"/usr": "/usr", "/srv/apps": "/apps"}}, driver.NewFake())
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		want []string // the args
		err  string
	}{
		{"relative jar", map[string]any{"jar_path": "local/app.jar"}, []string{"-jar", "/local/app.jar"}, ""},
		{"class path", map[string]any{"class": "M", "class_path": "local/classes:alloc/data/x.jar:/apps/lib:/data/y"},
			[]string{"-cp", "/local/classes:/alloc/data/x.jar:/apps/lib:/data/y", "M"}, ""},
		{"absolute under chroot_env", map[string]any{"jar_path": "/usr/share/java/x.jar"}, []string{"-jar", "/usr/share/java/x.jar"}, ""},
		{"relative outside the dirs", map[string]any{"class": "M", "class_path": "app"}, nil, `class_path "app": a relative path is relative to the task dir`},
		{"escape", map[string]any{"class": "M", "class_path": "../x"}, nil, `"../x"`},
		{"absolute invisible", map[string]any{"jar_path": "/home/u/app.jar"}, nil, `"/home/u/app.jar" is not visible in the task's root`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := d.innerConfig(&driver.TaskConfig{ID: "a/t", TaskDir: taskDir, Isolation: iso, Config: tc.cfg})
			if tc.err != "" {
				require.ErrorIs(t, err, driver.ErrInvalidConfig)
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, in.Config["args"])
			require.Equal(t, filepath.Join(home, "bin", "java"), in.Config["command"])
			require.Equal(t, append(iso.Mounts, driver.Mount{Source: home, Destination: home, ReadOnly: true}), in.Isolation.Mounts,
				"a JVM outside chroot_env is bound in, read-only")
			require.Len(t, iso.Mounts, 1, "the caller's isolation is left as it is")
		})
	}

	// a JVM beneath a chroot_env path runs where the root shows it
	d = New(Config{JavaHome: home, ChrootEnv: map[string]string{filepath.Dir(home): "/opt"}}, driver.NewFake())
	in, err := d.innerConfig(&driver.TaskConfig{ID: "a/t", TaskDir: taskDir, Isolation: iso, Config: map[string]any{"jar_path": "local/app.jar"}})
	require.NoError(t, err)
	require.Equal(t, filepath.Join("/opt", filepath.Base(home), "bin", "java"), in.Config["command"])
	require.Equal(t, iso.Mounts, in.Isolation.Mounts, "nothing more to bind")

	tmpHome, err := os.MkdirTemp("/tmp", "java-home-") // t.TempDir keeps its first parent
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(tmpHome) })
	require.NoError(t, os.MkdirAll(filepath.Join(tmpHome, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(tmpHome, "bin", "java"), []byte("#!/bin/sh\n"), 0o755))
	d = New(Config{JavaHome: tmpHome}, driver.NewFake())
	_, err = d.innerConfig(&driver.TaskConfig{ID: "a/t", TaskDir: taskDir, Isolation: iso, Config: map[string]any{"jar_path": "local/app.jar"}})
	require.ErrorIs(t, err, ErrNoJava)
	require.ErrorContains(t, err, "cannot be bound into the task's root")

	// not isolated (a CSI plugin): paths are used as given
	in, err = d.innerConfig(&driver.TaskConfig{ID: "a/t", TaskDir: taskDir, Config: map[string]any{"jar_path": "local/app.jar"}})
	require.NoError(t, err)
	require.Equal(t, []string{"-jar", "local/app.jar"}, in.Config["args"])
	require.Nil(t, in.Isolation)
}
