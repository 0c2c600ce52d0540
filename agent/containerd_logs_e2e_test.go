//go:build linux

package agent

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/runtime/driver/containerd"
	"github.com/troupe-dev/troupe/runtime/driver/containerd/ctrdtest"
)

// seqLines is what `seq 1 n` prints.
func seqLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i) + "\n")
	}
	return b.String()
}

// TestContainerdLogsRotateAndFollow: a container with logs { max_files =
// 3, max_file_size = 1 } that prints 2.7 MB leaves Nomad's layout,
// <alloc>/alloc/logs/t.stdout.0 .. .2, each at most 1 MiB, and Nomad's
// client following /v1/client/fs/logs from the start (as troupe alloc logs
// -f does) reads every line
// once, in order, across the rotation.
func TestContainerdLogsRotateAndFollow(t *testing.T) {
	dm := ctrdtest.StartDaemon(t)
	archive, _ := ctrdtest.BusyboxArchive(t, t.TempDir())
	e := startContainerdAgent(t, t.TempDir(), dm)
	const n = 400000 // 2.69 MB
	jobID := e.run(t, fmt.Sprintf(`job "logs" {
  group "g" {
    network { mode = "bridge" }
    task "t" {
      driver = "containerd"
      config {
        image   = %q
        command = "/bin/busybox"
        args    = ["sh", "-c", "/bin/busybox seq 1 %d; exec /bin/busybox sleep 600"]
      }
      logs {
        max_files     = 3
        max_file_size = 1
      }
      kill_timeout = "1s"
      resources {
        cpu    = 50
        memory = 64
      }
    }
  }
}`, containerd.ArchiveScheme+archive, n))
	al := e.waitRunning(t, jobID, 1)[0]
	want := seqLines(n)
	// what `troupe alloc logs -f` does: troupe's client on /v1/client/fs/logs
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rc, err := e.c.AllocFS().Logs(ctx, al.GetID(), "t", "stdout", true, api.OriginStart, 0)
	require.NoError(t, err)
	defer rc.Close()
	got := make([]byte, len(want))
	read, err := io.ReadFull(rc, got)
	require.NoError(t, err, "followed %d of %d bytes", read, len(want))
	require.True(t, string(got) == want, "the follower read every line once, in order")

	logs := filepath.Join(e.a.AllocDir(), al.GetID(), "alloc", "logs")
	entries, err := os.ReadDir(logs)
	require.NoError(t, err)
	var names []string
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), "t.stdout") {
			names = append(names, en.Name())
			fi, err := en.Info()
			require.NoError(t, err)
			require.LessOrEqual(t, fi.Size(), int64(1<<20), en.Name())
		}
	}
	require.Equal(t, []string{"t.stdout.0", "t.stdout.1", "t.stdout.2"}, names)
	require.Equal(t, want, readLog(filepath.Join(logs, "t.stdout")))
}
