//go:build linux

package exec

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkStartTask measures StartTask (until the task runs) for a task
// in the host's root and for an isolated one:
//
//	go test -run '^$' -bench StartTask ./runtime/driver/exec/
func BenchmarkStartTask(b *testing.B) {
	for _, isolate := range []bool{false, true} {
		name := "host"
		if isolate {
			name = "isolated"
		}
		b.Run(name, func(b *testing.B) {
			if isolate && syscall.Geteuid() != 0 {
				b.Skip("isolation needs root")
			}
			exe, err := os.Executable()
			require.NoError(b, err)
			d := New(Config{ExecutorPath: exe, ExecutorEnv: []string{envExecutor + "=1"}})
			defer d.Shutdown()
			for i := 0; b.Loop(); i++ {
				cfg, _ := isolated(b, "sleep 60")
				if !isolate {
					cfg.Isolation = nil
				}
				h, err := d.StartTask(context.Background(), cfg)
				require.NoError(b, err)
				b.StopTimer()
				_ = syscall.Kill(-h.Pid, syscall.SIGKILL)
				ch, err := d.WaitTask(context.Background(), cfg.ID)
				require.NoError(b, err)
				<-ch
				require.NoError(b, d.DestroyTask(context.Background(), cfg.ID, true))
				b.StartTimer()
			}
		})
	}
}
