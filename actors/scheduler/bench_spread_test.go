package scheduler

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/troupe-dev/troupe/messages"
)

const benchRacks = 25

// rackedNodes are SimulatedNodes with meta.rack r00..r24, round robin.
func rackedNodes(n int) []*messages.Node {
	nodes := SimulatedNodes(n, 1)
	for i, node := range nodes {
		node.Meta = map[string]string{"rack": fmt.Sprintf("r%02d", i%benchRacks)}
	}
	return nodes
}

// BenchmarkSpread25Racks10kNodes plans one eval placing 1000 allocs of a
// group that spreads evenly over 25 racks (${meta.rack}) on 10,000 nodes.
// As in Nomad, a group with a spread ranks max(100, count) candidates per
// placement, here 1000, instead of 14; rack-gap is the difference between
// the most and the least used rack (0 or 1: even).
func BenchmarkSpread25Racks10kNodes(b *testing.B) {
	job := benchJob()
	job.TaskGroups[0].Spreads = []*messages.Spread{{Attribute: "${meta.rack}", Weight: 100}}
	nodes := rackedNodes(benchNodes)
	rackOf := map[string]string{}
	for _, n := range nodes {
		rackOf[n.ID] = n.Meta["rack"]
	}
	snap := newMemSnapshot(nodes, job)
	opts := benchOpts()
	b.ReportAllocs()
	b.ResetTimer()
	gap, evaluated := 0, 0
	for range b.N {
		plan := benchPlace(b, snap, job, opts)
		perRack := map[string]int{}
		for _, a := range plan.Place {
			perRack[rackOf[a.NodeID]]++
			evaluated += int(a.Metrics.NodesEvaluated)
		}
		lo, hi := benchCount, 0
		for _, c := range perRack {
			lo, hi = min(lo, c), max(hi, c)
		}
		if len(perRack) < benchRacks {
			lo = 0
		}
		gap = max(gap, hi-lo)
	}
	b.ReportMetric(float64(benchCount*b.N)/b.Elapsed().Seconds(), "placements/s")
	b.ReportMetric(float64(evaluated)/float64(benchCount*b.N), "nodes/alloc")
	b.ReportMetric(float64(gap), "rack-gap")
}

// benchOpts are a benchmark's options: a fixed seed, counted IDs.
func benchOpts() Options {
	n := 0
	return Options{Now: testNow, Rand: rand.New(rand.NewPCG(1, 2)),
		NewID: func() string { n++; return strconv.Itoa(n) }}
}

// benchPlace plans job's eval and requires every allocation placed.
func benchPlace(b *testing.B, snap Snapshot, job *messages.Job, opts Options) *messages.ApplyPlan {
	plan, err := process(snap, testEval(job), opts)
	if err != nil || len(plan.Place) != benchCount {
		b.Fatalf("placed %d: %v", len(plan.GetPlace()), err)
	}
	return plan
}
