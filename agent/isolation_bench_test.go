//go:build linux

package agent

import (
	"fmt"
	"slices"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// BenchmarkExecSubmitToRunning measures, for isolated exec tasks, the
// time from a job's registration through the HTTP API to its allocation
// running in the state store, and reports its p50 and p90. Run it (as
// root) with
//
//	go test -run x -bench ExecSubmitToRunning -benchtime 20x ./agent/
func BenchmarkExecSubmitToRunning(b *testing.B) {
	requireRoot(b)
	a := startAgent(b, testConfig(b, b.TempDir()))
	b.Cleanup(func() { _ = a.Shutdown() })
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(b, err)
	var took []time.Duration
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("bench-%d", i)
		job := nomad.NewServiceJob(id, id, "global", 50)
		tg := nomad.NewTaskGroup("g", 1)
		task := nomad.NewTask("t", "exec").SetConfig("command", "/bin/sleep").SetConfig("args", []string{"600"}).
			Require(&nomad.Resources{CPU: ptr(20), MemoryMB: ptr(16)})
		task.KillTimeout = ptr(time.Second)
		tg.AddTask(task)
		job.AddTaskGroup(tg)
		start := time.Now()
		_, _, err := c.Jobs().Register(job, nil)
		require.NoError(b, err)
		require.Eventually(b, func() bool {
			for _, al := range a.Store().Snapshot().AllocsByJob("default", id) {
				if al.GetClientStatus() == "running" {
					return true
				}
			}
			return false
		}, 30*time.Second, time.Millisecond)
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*9/10].Microseconds())/1000, "p90-ms")
}
