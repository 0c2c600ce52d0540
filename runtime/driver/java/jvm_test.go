//go:build linux

package java

import (
	"context"
	"log/slog"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/driver/exec"
)

// exitSource prints its args and the system property x, then exits with
// the code its first arg names.
const exitSource = `public class Exit {
    public static void main(String[] args) {
        System.out.println("args=" + String.join(",", args) + " x=" + System.getProperty("x"));
        System.exit(Integer.parseInt(args[0]));
    }
}
`

// realDriver is a java driver over a real exec driver whose executor is
// this test binary; it skips (fails in CI) without a JDK.
func realDriver(t *testing.T) *Driver {
	t.Helper()
	for _, tool := range []string{"java", "javac", "jar"} {
		if _, err := osexec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s missing: run scripts/setup.sh (default-jdk-headless)", tool)
			}
			t.Skipf("skipping: %s missing (scripts/setup.sh installs default-jdk-headless)", tool)
		}
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	log := slog.New(slog.NewTextHandler(t.Output(), nil))
	d := New(Config{Logger: log}, exec.New(exec.Config{ExecutorPath: exe,
		ExecutorEnv: []string{envExecutor + "=1", "GORACE=atexit_sleep_ms=0"}, Logger: log}))
	t.Cleanup(d.Shutdown)
	return d
}

// buildTaskDir makes a task dir holding classes/Exit.class and
// local/exit.jar (Main-Class Exit).
func buildTaskDir(t *testing.T) string {
	t.Helper()
	alloc := t.TempDir()
	dir := filepath.Join(alloc, "t")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "local"), 0o755))
	src := filepath.Join(alloc, "Exit.java")
	require.NoError(t, os.WriteFile(src, []byte(exitSource), 0o644))
	for _, argv := range [][]string{
		{"javac", "-d", filepath.Join(dir, "classes"), src},
		{"jar", "cfe", filepath.Join(dir, "local", "exit.jar"), "Exit", "-C", filepath.Join(dir, "classes"), "."},
	} {
		out, err := osexec.Command(argv[0], argv[1:]...).CombinedOutput()
		require.NoError(t, err, "%v: %s", argv, out)
	}
	return dir
}

// TestRealJVM runs both forms on a real JVM through a real exec driver,
// with paths relative to the task dir: the program sees its args and the
// -D option, and its exit code is the task's.
func TestRealJVM(t *testing.T) {
	d := realDriver(t)
	dir := buildTaskDir(t)
	for _, tc := range []struct {
		name   string
		config map[string]any
		code   int
		want   string
	}{
		{"jar", map[string]any{"jar_path": "local/exit.jar", "jvm_options": []any{"-Dx=jar"}, "args": []any{"0", "a"}},
			0, "args=0,a x=jar\n"},
		{"class", map[string]any{"class": "Exit", "class_path": "classes", "jvm_options": []any{"-Dx=cls", "-Xmx32m"},
			"args": []any{"3"}}, 3, "args=3 x=cls\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout := filepath.Join(dir, tc.name+".stdout")
			cfg := &driver.TaskConfig{ID: "alloc/" + tc.name, AllocID: "alloc", TaskName: "t", TaskDir: dir,
				Config: tc.config, Env: map[string]string{"PATH": os.Getenv("PATH")},
				StdoutPath: stdout, StderrPath: filepath.Join(dir, tc.name+".stderr"), MemoryMB: 128}
			ctx := context.Background()
			h, err := d.StartTask(ctx, cfg)
			require.NoError(t, err)
			require.Equal(t, Name, h.Driver)
			ch, err := d.WaitTask(ctx, cfg.ID)
			require.NoError(t, err)
			select {
			case r := <-ch:
				stderr, _ := os.ReadFile(cfg.StderrPath)
				require.NoError(t, r.Err)
				require.Equal(t, tc.code, r.ExitCode, "stderr: %s", stderr)
			case <-time.After(60 * time.Second):
				t.Fatal("the JVM never exited")
			}
			out, err := os.ReadFile(stdout)
			require.NoError(t, err)
			require.Equal(t, tc.want, string(out))
			require.NoError(t, d.DestroyTask(ctx, cfg.ID, false))
		})
	}
}

// TestRealFingerprint: the attributes are what `java -version` says.
func TestRealFingerprint(t *testing.T) {
	d := realDriver(t)
	fp := d.Fingerprint(context.Background())
	require.True(t, fp.Detected && fp.Healthy, fp.HealthDescription)
	out, err := osexec.Command("java", "-version").CombinedOutput()
	require.NoError(t, err)
	require.Equal(t, "1", fp.Attributes["driver.java"])
	require.NotEmpty(t, fp.Attributes["driver.java.version"])
	require.Contains(t, string(out), `"`+fp.Attributes["driver.java.version"]+`"`)
	require.True(t, strings.Contains(string(out), fp.Attributes["driver.java.runtime"]) &&
		strings.Contains(string(out), fp.Attributes["driver.java.vm"]), "%v vs %s", fp.Attributes, out)
}
