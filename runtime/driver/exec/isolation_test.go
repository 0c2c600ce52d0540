//go:build linux

package exec

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// isolated is an isolated task running script in an allocation dir
// laid out as the client lays it out.
func isolated(t testing.TB, script string) (*driver.TaskConfig, string) {
	t.Helper()
	base := t.TempDir()
	allocDir := filepath.Join(base, "alloc")
	require.NoError(t, os.MkdirAll(filepath.Join(allocDir, "logs"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(allocDir, "data"), 0o777))
	require.NoError(t, os.Chmod(filepath.Join(allocDir, "data"), 0o777))
	taskDir := filepath.Join(base, "web")
	require.NoError(t, os.MkdirAll(taskDir, 0o755))
	cfg := shellConfig(taskDir, "alloc/"+strings.ReplaceAll(t.Name(), "/", "_"), script)
	cfg.StdoutPath = filepath.Join(allocDir, "logs", "web.stdout.0")
	cfg.StderrPath = filepath.Join(allocDir, "logs", "web.stderr.0")
	cfg.TaskDir = taskDir
	cfg.Isolation = &driver.Isolation{AllocDir: allocDir}
	cfg.Env["NOMAD_TASK_DIR"] = driver.TaskLocalDir
	return cfg, base
}

// runIsolated runs cfg to its end and returns its stdout and stderr.
func runIsolated(t *testing.T, d *Driver, cfg *driver.TaskConfig) (string, string) {
	t.Helper()
	h, err := d.StartTask(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { killTask(t, h) })
	r := result(t, d, cfg.ID)
	out, _ := os.ReadFile(cfg.StdoutPath)
	errOut, _ := os.ReadFile(cfg.StderrPath)
	require.True(t, r.Successful(), "task failed: %+v\nstdout: %s\nstderr: %s", r, out, errOut)
	return string(out), string(errOut)
}

// rootEntries is what an isolated task's / holds on this host.
func rootEntries() []string {
	want := []string{"alloc", "dev", "local", "proc", "secrets", "tmp"}
	for src, dst := range DefaultChrootEnv {
		if _, err := os.Lstat(src); err == nil {
			want = append(want, strings.Split(strings.TrimPrefix(dst, "/"), "/")[0])
		}
	}
	slices.Sort(want)
	return slices.Compact(want)
}

func TestIsolatedTaskView(t *testing.T) {
	requireRoot(t, "isolation")
	marker := "/root/troupe-test-marker"
	require.NoError(t, os.WriteFile(marker, []byte("host secret"), 0o644))
	t.Cleanup(func() { os.Remove(marker) })
	cfg, _ := isolated(t, `id -u; echo "comm=$(cat /proc/1/comm)"; ls -1 / | tr '\n' ' '; echo
cat /root/troupe-test-marker 2>/dev/null && echo READ-HOST-ROOT
touch /usr/troupe-x 2>/dev/null && echo WROTE-USR
touch / 2>/dev/null && echo WROTE-ROOT
echo local > /local/f && echo tmp > /tmp/f && echo data > /alloc/data/f && echo wrote-dirs
echo "pwd=$(pwd) task_dir=$NOMAD_TASK_DIR"
stat -c 'secrets=%a %u' /secrets; grep ' /secrets ' /proc/self/mountinfo | grep -c ' - tmpfs ' 
ls /dev | tr '\n' ' '; echo
grep CapBnd /proc/self/status`)
	out, _ := runIsolated(t, newDriver(t), cfg)
	lines := strings.Split(out, "\n")
	require.Equal(t, "65534", lines[0], "runs as nobody\n%s", out)
	require.Equal(t, "comm=sh", lines[1], "the task is pid 1 of its own pid namespace")
	require.Equal(t, strings.Join(rootEntries(), " "), strings.TrimSpace(lines[2]))
	require.NotContains(t, out, "READ-HOST-ROOT")
	require.NotContains(t, out, "WROTE")
	require.Contains(t, out, "wrote-dirs\npwd=/local task_dir=/local\nsecrets=700 65534\n1\n")
	require.Contains(t, out, "\nfd full null ptmx pts random shm stderr stdin stdout tty urandom zero \n")
	require.Contains(t, out, "CapBnd:\t00000000a80405fb", "Nomad's exec capability set")
	data, err := os.ReadFile(filepath.Join(cfg.TaskDir, "local", "f"))
	require.NoError(t, err)
	require.Equal(t, "local\n", string(data))
	data, err = os.ReadFile(filepath.Join(cfg.Isolation.AllocDir, "data", "f"))
	require.NoError(t, err)
	require.Equal(t, "data\n", string(data))
}
