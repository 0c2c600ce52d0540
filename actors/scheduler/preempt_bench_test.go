package scheduler

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/troupe-dev/troupe/messages"
)

// BenchmarkPreempt10kNodes plans one eval placing 100 allocs over 10,000
// nodes that low-priority allocations fill: every placement fails plainly,
// then walks the pool for the cheapest preemption (the worst case; it
// costs nothing while plain placements succeed).
func BenchmarkPreempt10kNodes(b *testing.B) {
	const count = 100
	job := testJob("high", jobTypeService, count)
	job.Priority = 80
	job.TaskGroups[0].Tasks[0].Resources.CPU = 4000
	mem := newMemSnapshot(SimulatedNodes(benchNodes, 1), job)
	for i, n := range mem.Nodes() {
		n.NodeResources.Cpu.CpuShares = 4000 // each eviction makes room for one
		low := testJob(fmt.Sprintf("low%d", i), jobTypeService, 1)
		low.Priority = int32(10 + i%30)
		low.TaskGroups[0].Tasks[0].Resources.CPU = 4000
		mem.AddJob(low)
		mem.AddAlloc(testAlloc(low, n.ID, 0))
	}
	snap := configSnap{mem, &messages.SchedulerConfiguration{PreemptionConfig: &messages.PreemptionConfig{ServiceSchedulerEnabled: true}}}
	n := 0
	opts := Options{Now: testNow, Rand: rand.New(rand.NewPCG(1, 2)), NewID: func() string { n++; return strconv.Itoa(n) }}
	b.ReportAllocs()
	for range b.N {
		plan, err := process(snap, testEval(job), opts)
		if err != nil || len(plan.Place) != count || len(plan.Preemptions) != count {
			b.Fatalf("placed %d, preempted %d: %v", len(plan.GetPlace()), len(plan.GetPreemptions()), err)
		}
	}
	b.ReportMetric(float64(count*b.N)/b.Elapsed().Seconds(), "allocs/s")
}
