//go:build linux

package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/containerd/v2/pkg/oci"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver/containerd"
	"github.com/troupe-dev/troupe/runtime/driver/containerd/ctrdtest"
)

// BenchmarkContainerdAllocStart measures, in one run, the time from an
// allocation reaching its client (the task's Received event) to its
// container running (Started), for host-network containerd tasks, and a
// bare containerd client create+start of the same image; it reports
// both and their ratio. Run it with
//
//	go test -run x -bench ContainerdAllocStart -benchtime 20x ./agent/
func BenchmarkContainerdAllocStart(b *testing.B) {
	dm := ctrdtest.StartDaemon(b)
	archive, _ := ctrdtest.BusyboxArchive(b, b.TempDir())
	cfg := testConfig(b, b.TempDir())
	cfg.ContainerdAddress, cfg.ContainerdNamespace = dm.Address(), dm.Namespace()
	e := startNetAgentWith(b, cfg)
	job := func(id string) string {
		return fmt.Sprintf(`job %q {
  group "g" {
    task "t" {
      driver = "containerd"
      config {
        image   = %q
        command = "/bin/busybox"
        args    = ["sleep", "600"]
      }
      kill_timeout = "1s"
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}`, id, containerd.ArchiveScheme+archive)
	}
	started := func(jobID string) time.Duration {
		var d time.Duration
		require.Eventually(b, func() bool {
			for _, al := range e.a.Store().Snapshot().AllocsByJob("default", jobID) {
				var recv, start int64
				for _, ev := range al.GetTaskStates()["t"].GetEvents() {
					switch ev.GetType() {
					case "Received":
						recv = ev.GetTime()
					case "Started":
						start = ev.GetTime()
					}
				}
				if recv > 0 && start > 0 {
					d = time.Duration(start - recv)
					return true
				}
			}
			return false
		}, time.Minute, 5*time.Millisecond)
		return d
	}
	e.run(b, job("warm")) // imports and unpacks the image once
	started("warm")

	cl, ctx := dm.Client(b)
	img, err := cl.GetImage(ctx, ctrdtest.BusyboxImage)
	require.NoError(b, err)
	var troupe, bare time.Duration
	b.ResetTimer()
	for i := range b.N {
		id := fmt.Sprintf("bench%d", i)
		troupe += started(e.run(b, job(id)))
		b.StopTimer()
		_, _, err := e.c.Jobs().Deregister(id, true, nil)
		require.NoError(b, err)
		t0 := time.Now()
		c, err := cl.NewContainer(ctx, "bare-"+id, client.WithImage(img), client.WithSnapshotter("overlayfs"),
			client.WithNewSnapshot("bare-"+id, img), client.WithNewSpec(oci.WithImageConfig(img), oci.WithProcessArgs("sleep", "600")))
		require.NoError(b, err)
		tsk, err := c.NewTask(ctx, cio.NullIO)
		require.NoError(b, err)
		require.NoError(b, tsk.Start(ctx))
		bare += time.Since(t0)
		_, _ = tsk.Delete(ctx, client.WithProcessKill)
		_ = c.Delete(ctx, client.WithSnapshotCleanup)
		b.StartTimer()
	}
	b.ReportMetric(float64(troupe.Milliseconds())/float64(b.N), "troupe-ms")
	b.ReportMetric(float64(bare.Milliseconds())/float64(b.N), "bare-ms")
	b.ReportMetric(float64(troupe)/float64(bare), "ratio")
}
