package scheduler

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

const (
	benchNodes = 10000
	benchCount = 1000
)

func benchJob() *messages.Job {
	job := testJob("bench", jobTypeService, benchCount)
	job.Constraints = []*messages.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}}
	return job
}

// BenchmarkProcess10kNodes plans one eval placing 1000 allocs over 10,000
// nodes (the snapshot is not changed, so every iteration plans the same).
func BenchmarkProcess10kNodes(b *testing.B) {
	job := benchJob()
	snap := newMemSnapshot(SimulatedNodes(benchNodes, 1), job)
	eval := testEval(job)
	n := 0
	opts := Options{Now: testNow, Rand: rand.New(rand.NewPCG(1, 2)),
		NewID: func() string { n++; return strconv.Itoa(n) }}
	b.ReportAllocs()
	b.ResetTimer()
	evaluated := 0
	for range b.N {
		plan, err := process(snap, eval, opts)
		if err != nil || len(plan.Place) != benchCount {
			b.Fatalf("placed %d: %v", len(plan.GetPlace()), err)
		}
		for _, a := range plan.Place {
			evaluated += int(a.Metrics.NodesEvaluated)
		}
	}
	b.ReportMetric(float64(benchCount*b.N)/b.Elapsed().Seconds(), "allocs/s")
	b.ReportMetric(float64(evaluated)/float64(benchCount*b.N), "nodes/alloc")
}

// BenchmarkProcess10kNodesPorts is BenchmarkProcess10kNodes for a group
// with a static and a dynamic port in a bridge network.
func BenchmarkProcess10kNodesPorts(b *testing.B) {
	job := benchJob()
	job.TaskGroups[0].Networks = []*messages.NetworkResource{{Mode: "bridge",
		ReservedPorts: []*messages.Port{{Label: "http", Value: 8080, To: 80}},
		DynamicPorts:  []*messages.Port{{Label: "admin", To: -1}}}}
	snap := newMemSnapshot(SimulatedNodes(benchNodes, 1), job)
	n := 0
	opts := Options{Now: testNow, Rand: rand.New(rand.NewPCG(1, 2)),
		NewID: func() string { n++; return strconv.Itoa(n) }}
	b.ReportAllocs()
	for range b.N {
		plan, err := process(snap, testEval(job), opts)
		if err != nil || len(plan.Place) != benchCount {
			b.Fatalf("placed %d: %v", len(plan.GetPlace()), err)
		}
	}
	b.ReportMetric(float64(benchCount*b.N)/b.Elapsed().Seconds(), "allocs/s")
}

// BenchmarkProcess10kNodesDevices is BenchmarkProcess10kNodes for a task
// that asks for one GPU with a constraint and an affinity, on nodes that
// each have 8 GPUs of one of two models.
func BenchmarkProcess10kNodesDevices(b *testing.B) {
	job := benchJob()
	job.TaskGroups[0].Tasks[0].Resources.Devices = []*messages.RequestedDevice{{Name: "nvidia/gpu", Count: 1,
		Constraints: []*messages.Constraint{{LTarget: "${device.attr.memory_mib}", Operand: ">=", RTarget: "40000"}},
		Affinities:  []*messages.Affinity{{LTarget: "${device.model}", Operand: "=", RTarget: "NVIDIA H200", Weight: 50}}}}
	nodes := SimulatedNodes(benchNodes, 1)
	for i, n := range nodes {
		model, mem := "NVIDIA H100 80GB HBM3", "81559"
		if i%2 == 0 {
			model, mem = "NVIDIA H200", "143771"
		}
		d := &messages.NodeDeviceResource{Vendor: "nvidia", Type: "gpu", Name: model,
			Attributes: map[string]string{"memory_mib": mem}}
		for j := range 8 {
			d.Instances = append(d.Instances, &messages.NodeDevice{ID: "GPU-" + strconv.Itoa(j), Healthy: true})
		}
		n.NodeResources.Devices = []*messages.NodeDeviceResource{d}
	}
	snap := newMemSnapshot(nodes, job)
	n := 0
	opts := Options{Now: testNow, Rand: rand.New(rand.NewPCG(1, 2)),
		NewID: func() string { n++; return strconv.Itoa(n) }}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		plan, err := process(snap, testEval(job), opts)
		if err != nil || len(plan.Place) != benchCount {
			b.Fatalf("placed %d: %v", len(plan.GetPlace()), err)
		}
	}
	b.ReportMetric(float64(benchCount*b.N)/b.Elapsed().Seconds(), "allocs/s")
}

// BenchmarkBareBinPack10kNodes is the floor Process is measured against:
// for each of the same 1000 placements, scan the same number of candidate
// nodes, score them with the bin-pack formula and take the best; no
// feasibility, no plan. Like Process it reads each node's capacity on
// its first visit.
func BenchmarkBareBinPack10kNodes(b *testing.B) {
	nodes := SimulatedNodes(benchNodes, 1)
	order := rand.New(rand.NewPCG(1, 2)).Perm(len(nodes))
	limit := logLimit(len(nodes))
	ask := groupAsk(benchJob().TaskGroups[0])
	usage := make([]nodeUsage, len(nodes))
	b.ResetTimer()
	for range b.N {
		clear(usage)
		cursor := 0
		for range benchCount {
			best, bestScore := -1, 0.0
			for range limit {
				idx := order[cursor]
				if cursor++; cursor == len(order) {
					cursor = 0
				}
				u := &usage[idx]
				if !u.ready {
					u.cap, u.ready = nodeCapacity(nodes[idx]), true
				}
				if s := binPackScore(u, ask); best < 0 || s > bestScore {
					best, bestScore = idx, s
				}
			}
			usage[best].used.add(ask, 1)
		}
	}
	b.ReportMetric(float64(benchCount*b.N)/b.Elapsed().Seconds(), "allocs/s")
}

// BenchmarkProcess10kNodesLoaded plans the same eval on a cluster that
// already runs 100,000 allocs of other jobs: with usage totals
// (NodeUsageSource) and with usage summed from AllocsByNode.
func BenchmarkProcess10kNodesLoaded(b *testing.B) {
	job := benchJob()
	nodes := SimulatedNodes(benchNodes, 1)
	snap := newMemSnapshot(nodes, job)
	other := testJob("other", jobTypeService, 1)
	for i := range 10 * benchNodes {
		a := testAlloc(other, nodes[i%benchNodes].ID, uint32(i))
		a.ID = "other-" + strconv.Itoa(i)
		snap.AddAlloc(a)
	}
	for _, bc := range []struct {
		name string
		snap Snapshot
	}{{"totals", snap}, {"summed", hideUsage{snap}}} {
		b.Run(bc.name, func(b *testing.B) {
			n := 0
			opts := Options{Now: testNow, Rand: rand.New(rand.NewPCG(1, 2)),
				NewID: func() string { n++; return strconv.Itoa(n) }}
			for range b.N {
				if _, err := process(bc.snap, testEval(job), opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(benchCount*b.N)/b.Elapsed().Seconds(), "allocs/s")
		})
	}
}

// BenchmarkProcessInPlace1kAllocs plans a new version of a job with 1000
// running allocations whose only change is the priority: every one is
// updated in place.
func BenchmarkProcessInPlace1kAllocs(b *testing.B) {
	job := benchJob()
	nodes := SimulatedNodes(benchNodes, 1)
	snap := newMemSnapshot(nodes, job)
	for i := range benchCount {
		snap.AddAlloc(testAlloc(job, nodes[i].ID, uint32(i)))
	}
	v1 := proto.Clone(job).(*messages.Job)
	v1.Version, v1.Priority = 1, 90
	snap.AddJob(v1)
	opts := Options{Now: testNow, Rand: rand.New(rand.NewPCG(1, 2)), NewID: func() string { return "x" }}
	b.ReportAllocs()
	for range b.N {
		plan, err := process(snap, testEval(v1), opts)
		if err != nil || len(plan.Place) != benchCount || len(plan.Stop) != 0 {
			b.Fatalf("placed %d, stopped %d: %v", len(plan.GetPlace()), len(plan.GetStop()), err)
		}
	}
}

// BenchmarkProcess10kNodesCores is BenchmarkProcess10kNodes for a task
// that reserves a core, on the simulated nodes (1000 MHz a core).
func BenchmarkProcess10kNodesCores(b *testing.B) {
	job := benchJob()
	job.TaskGroups[0].Tasks[0].Resources.Cores = 1
	nodes := SimulatedNodes(benchNodes, 1)
	for _, n := range nodes { // as an agent fingerprints them
		n.NodeResources.Cpu.ReservableCpuCores = n.ReservableCores()
	}
	snap := newMemSnapshot(nodes, job)
	n := 0
	opts := Options{Now: testNow, Rand: rand.New(rand.NewPCG(1, 2)),
		NewID: func() string { n++; return strconv.Itoa(n) }}
	b.ReportAllocs()
	for range b.N {
		plan, err := process(snap, testEval(job), opts)
		if err != nil || len(plan.Place) != benchCount {
			b.Fatalf("placed %d: %v", len(plan.GetPlace()), err)
		}
	}
	b.ReportMetric(float64(benchCount*b.N)/b.Elapsed().Seconds(), "allocs/s")
}
