//go:build linux

package agent

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver/containerd"
	"github.com/troupe-dev/troupe/runtime/driver/containerd/ctrdtest"
)

// containerdIdleJob is a host-network containerd job whose task idles
// with GREETING in its env and /local as its working dir.
func containerdIdleJob(id, image string) string {
	return fmt.Sprintf(`job %q {
  group "g" {
    task "box" {
      driver = "containerd"
      config {
        image    = %q
        command  = "/bin/busybox"
        args     = ["sh", "-c", "exec sleep 600"]
        work_dir = "/local"
      }
      env {
        GREETING = "from-container-env"
      }
      kill_timeout = "2s"
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}`, id, image)
}

// TestNomadClientExecsIntoContainer runs commands in a containerd task
// through Nomad's own Go client (its websocket framing, stdin, a pty and
// exit codes), before and after an agent restart.
func TestNomadClientExecsIntoContainer(t *testing.T) {
	dm := ctrdtest.StartDaemon(t)
	archive, _ := ctrdtest.BusyboxArchive(t, t.TempDir())
	dir := t.TempDir()
	e := startContainerdAgent(t, dir, dm)
	jobID := e.run(t, containerdIdleJob("ctrexec", containerd.ArchiveScheme+archive))
	require.Eventually(t, func() bool { return len(e.allocs(jobID, "running")) == 1 },
		60*time.Second, 20*time.Millisecond, "the container never ran")
	allocID := e.allocs(jobID, "running")[0].GetID()

	check := func(t *testing.T, e *netEnv) {
		c, err := nomad.NewClient(&nomad.Config{Address: "http://" + e.a.HTTPAddr()})
		require.NoError(t, err)
		alloc, _, err := c.Allocations().Info(allocID, nil)
		require.NoError(t, err)
		exec := func(t *testing.T, tty bool, stdin io.Reader, cmd ...string) (int, string, string) {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			code, err := c.Allocations().Exec(ctx, alloc, "box", tty, cmd, stdin, &stdout, &stderr, nil, nil)
			require.NoError(t, err)
			return code, stdout.String(), stderr.String()
		}
		t.Run("echo", func(t *testing.T) {
			code, stdout, stderr := exec(t, false, strings.NewReader(""), "echo", "hi")
			require.Zero(t, code)
			require.Equal(t, "hi\n", stdout)
			require.Empty(t, stderr)
		})
		t.Run("exit code", func(t *testing.T) {
			code, stdout, stderr := exec(t, false, strings.NewReader(""), "sh", "-c", "echo bad >&2; exit 3")
			require.Equal(t, 3, code)
			require.Empty(t, stdout)
			require.Equal(t, "bad\n", stderr)
		})
		t.Run("container context", func(t *testing.T) {
			code, stdout, _ := exec(t, false, strings.NewReader(""), "sh", "-c", `echo "$GREETING"; pwd; cat /proc/1/cmdline | tr '\0' ' '; echo`)
			require.Zero(t, code)
			require.Equal(t, "from-container-env\n/local\nsleep 600 \n", stdout, "the container's env, dir and pid namespace")
		})
		t.Run("stdin", func(t *testing.T) {
			code, stdout, _ := exec(t, false, strings.NewReader("fed\n"), "cat")
			require.Zero(t, code)
			require.Equal(t, "fed\n", stdout)
		})
		t.Run("shell on a pty", func(t *testing.T) {
			code, stdout, _ := exec(t, true, strings.NewReader("tty; echo $((40+2))-done\nexit 4\n"), "sh")
			require.Equal(t, 4, code)
			require.Contains(t, stdout, "/dev/pts/")
			require.Contains(t, stdout, "42-done")
		})
		t.Run("unknown program", func(t *testing.T) {
			code, _, stderr := exec(t, false, strings.NewReader(""), "no-such-program-here")
			require.Equal(t, 126, code)
			require.Contains(t, stderr, "no-such-program-here")
		})
	}
	t.Run("running", func(t *testing.T) { check(t, e) })

	// Agent restart: the container runs on and is re-attached; exec
	// works through the recovered task.
	crash(t, e.a)
	e = startContainerdAgent(t, dir, dm)
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + e.a.HTTPAddr()})
	require.NoError(t, err)
	alloc, _, err := c.Allocations().Info(allocID, nil)
	require.NoError(t, err)
	// Until the client has recovered the task, exec answers 404.
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		code, err := c.Allocations().Exec(ctx, alloc, "box", false, []string{"true"},
			strings.NewReader(""), io.Discard, io.Discard, nil, nil)
		return err == nil && code == 0
	}, 30*time.Second, 50*time.Millisecond, "exec never worked after the restart")
	t.Run("after an agent restart", func(t *testing.T) { check(t, e) })
}
