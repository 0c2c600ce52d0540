package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/csi/hostpath"
)

// BenchmarkCSIStop100 stops 100 allocations with one volume each while
// every plugin call takes 200 ms, and reports the wall time of the node
// side (stop until the last NodeUnstage ended: the volumes fan out, so
// about two latencies) and of the controller side (first to last
// ControllerUnpublish: serialised, so about 100 latencies). Run it with
//
//	go test -run x -bench CSIStop100 -benchtime 1x ./agent/
func BenchmarkCSIStop100(b *testing.B) {
	const n, latency = 100, 200 * time.Millisecond
	for range b.N {
		b.StopTimer()
		e := startPluginJob(b, testConfig(b, b.TempDir()))
		var ids []string
		for i := range n {
			ids = append(ids, fmt.Sprintf("bench[%d]", i))
		}
		e.create(b, ids...)
		jobID := e.run(b, volumeJob("bench", n, true, "bench"))
		e.waitRunning(b, jobID, n)
		require.NoError(b, e.ctl.SetLatency(b.Context(), "", latency))
		b.StartTimer()
		start := time.Now()
		_, _, err := e.c.Jobs().Deregister(jobID, false, nil)
		require.NoError(b, err)
		e.waitFreed(b, ids...)
		b.StopTimer()
		node := e.calls(b, "NodeUnstageVolume")
		ctrl := e.calls(b, "ControllerUnpublishVolume")
		require.Len(b, ctrl, n)
		b.ReportMetric(lastEnd(node).Sub(start).Seconds(), "node-side-s")
		b.ReportMetric(lastEnd(ctrl).Sub(ctrl[0].Start).Seconds(), "controller-side-s")
		b.ReportMetric(time.Since(start).Seconds(), "total-s")
		require.NoError(b, e.a.Shutdown())
	}
}

func lastEnd(calls []hostpath.Call) time.Time {
	var t time.Time
	for _, c := range calls {
		if c.End.After(t) {
			t = c.End
		}
	}
	return t
}
