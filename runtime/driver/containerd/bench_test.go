//go:build linux

package containerd

import (
	"context"
	"fmt"
	"testing"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/containerd/v2/pkg/oci"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver/containerd/ctrdtest"
)

// BenchmarkStartTask measures StartTask, with the image present, until
// the task runs. Stopping and removing the task is not timed.
func BenchmarkStartTask(b *testing.B) {
	e := setupEnv(b)
	d := e.newDriver(b)
	ctx := context.Background()
	base := e.taskConfig(b, "sleep 60")
	warm := *base
	warm.ID = warm.AllocID + "/warm" // imports and unpacks the image
	e.start(b, d, &warm)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cfg := *base
		cfg.ID = fmt.Sprintf("%s/t%d", cfg.AllocID, i)
		_, err := d.StartTask(ctx, &cfg)
		require.NoError(b, err)
		b.StopTimer()
		require.NoError(b, d.DestroyTask(ctx, cfg.ID, true))
		b.StartTimer()
	}
}

// BenchmarkBareClientStart is the floor to compare StartTask with:
// NewContainer, NewTask and Start on the containerd client directly.
func BenchmarkBareClientStart(b *testing.B) {
	e := setupEnv(b)
	warm := e.taskConfig(b, "true") // imports and unpacks the image
	d := e.newDriver(b)
	e.start(b, d, warm)
	require.True(b, result(b, d, warm.ID).Successful())
	cl, ctx := e.client(b)
	img, err := cl.GetImage(ctx, ctrdtest.BusyboxImage)
	require.NoError(b, err)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := fmt.Sprintf("bare-%d", i)
		c, err := cl.NewContainer(ctx, id, client.WithImage(img), client.WithSnapshotter(DefaultSnapshotter),
			client.WithNewSnapshot(id, img),
			client.WithNewSpec(oci.WithImageConfig(img), oci.WithProcessArgs("sleep", "60")))
		require.NoError(b, err)
		tsk, err := c.NewTask(ctx, cio.NullIO)
		require.NoError(b, err)
		require.NoError(b, tsk.Start(ctx))
		b.StopTimer()
		require.NoError(b, removeContainer(ctx, c))
		b.StartTimer()
	}
}
