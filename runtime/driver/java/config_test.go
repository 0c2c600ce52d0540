package java

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// fakeJava makes a JavaHome whose bin/java is a script, so the command
// line is checked without a JVM.
func fakeJava(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "bin", "java"), []byte("#!/bin/sh\n"), 0o755))
	return home
}

// TestCommandLine starts jar and class tasks through a fake driver and
// checks the command line it is handed, in Nomad's order: jvm options,
// then -jar JAR or -cp CLASS_PATH CLASS, then the program's args; and that
// the rest of the task (env, user, resources, dirs) passes unchanged.
func TestCommandLine(t *testing.T) {
	home := fakeJava(t)
	java := filepath.Join(home, "bin", "java")
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		want []string
	}{
		{"jar", map[string]any{"jar_path": "local/app.jar", "jvm_options": []any{"-Xmx64m", "-Dx=y"},
			"args": []any{"a", "b c"}}, []string{"-Xmx64m", "-Dx=y", "-jar", "local/app.jar", "a", "b c"}},
		{"bare jar", map[string]any{"jar_path": "/abs/app.jar"}, []string{"-jar", "/abs/app.jar"}},
		{"class", map[string]any{"class": "com.example.Main", "class_path": "local/classes:local/lib.jar",
			"jvm_options": []any{"-Dx=y"}, "args": []any{"one"}},
			[]string{"-Dx=y", "-cp", "local/classes:local/lib.jar", "com.example.Main", "one"}},
		{"class without class_path", map[string]any{"class": "Main"}, []string{"Main"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := driver.NewFake()
			d := New(Config{JavaHome: home}, fake)
			dir := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "local"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "local", "app.jar"), nil, 0o644))
			cfg := &driver.TaskConfig{ID: "a/t", AllocID: "a", TaskName: "t", Config: tc.cfg, TaskDir: dir,
				Env: map[string]string{"K": "V"}, User: "nobody", CPU: 100, MemoryMB: 64, MemoryMaxMB: 128,
				StdoutPath: filepath.Join(dir, "out"), NetnsPath: "/var/run/netns/x"}
			h, err := d.StartTask(context.Background(), cfg)
			require.NoError(t, err)
			require.Equal(t, Name, h.Driver, "the handle is the java driver's")
			got, ok := fake.Task("a/t")
			require.True(t, ok)
			require.Equal(t, map[string]any{"command": java, "args": tc.want}, got.Config)
			rest := *got
			rest.Config = cfg.Config
			require.Equal(t, *cfg, rest, "everything but the config passes as it is")
		})
	}
}

// TestBadConfigs: each bad config is refused by CheckConfig and by
// StartTask, which then starts nothing; the error names the key.
func TestBadConfigs(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		want string
	}{
		{"neither", map[string]any{"args": []any{"x"}}, "one of jar_path or class"},
		{"both", map[string]any{"jar_path": "a.jar", "class": "Main"}, "jar_path and class are exclusive"},
		{"class_path with jar", map[string]any{"jar_path": "a.jar", "class_path": "lib"}, "class_path goes with class"},
		{"empty jar", map[string]any{"jar_path": ""}, "jar_path must be a non-empty string"},
		{"class not a string", map[string]any{"class": 3.0}, "class must be a non-empty string"},
		{"args not a list", map[string]any{"class": "Main", "args": "x"}, "args must be a list of strings"},
		{"jvm option not a string", map[string]any{"class": "Main", "jvm_options": []any{"-Dx", 1.0}}, "jvm_options[1] must be a string"},
		{"unknown key", map[string]any{"class": "Main", "command": "/bin/sh"}, `unknown config key "command"`},
		{"nomad key not implemented", map[string]any{"class": "Main", "pid_mode": "host"}, "pid_mode is not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckConfig(tc.cfg)
			require.ErrorIs(t, err, driver.ErrInvalidConfig)
			require.ErrorContains(t, err, tc.want)
			fake := driver.NewFake()
			d := New(Config{JavaHome: fakeJava(t)}, fake)
			_, err = d.StartTask(context.Background(), &driver.TaskConfig{ID: "a/t", Config: tc.cfg, TaskDir: t.TempDir()})
			require.ErrorIs(t, err, driver.ErrInvalidConfig)
			require.Zero(t, fake.Calls(driver.MethodStartTask))
		})
	}
	fake := driver.NewFake()
	d := New(Config{JavaHome: fakeJava(t)}, fake)
	_, err := d.StartTask(context.Background(), &driver.TaskConfig{ID: "a/t",
		Config: map[string]any{"jar_path": "local/missing.jar"}, TaskDir: t.TempDir()})
	require.ErrorContains(t, err, `jar_path "local/missing.jar" is not in the task dir`)
	_, err = New(Config{JavaHome: t.TempDir()}, fake).StartTask(context.Background(), &driver.TaskConfig{ID: "a/t",
		Config: map[string]any{"class": "Main"}, TaskDir: t.TempDir()})
	require.ErrorIs(t, err, ErrNoJava)
	require.Zero(t, fake.Calls(driver.MethodStartTask))
}
