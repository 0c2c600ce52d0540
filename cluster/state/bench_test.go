package state

import (
	"fmt"
	"os"
	"testing"

	uuid "github.com/hashicorp/go-uuid"
	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// seedBench fills an FSM with nodes nodes and allocs allocations of job
// "bench", in plans of 1000.
func seedBench(b *testing.B, nodes, allocs int) *harness {
	h := newHarness(b)
	for i := range nodes {
		h.apply(registerNode(testNode(fmt.Sprintf("node-%06d", i), 1<<40, 1<<40)))
	}
	h.apply(registerJob(testJob("bench", 10, 10), testEval("eval-seed", "bench", "complete")))
	for start := 0; start < allocs; start += 1000 {
		h.apply(plan(benchPlan(fmt.Sprintf("seed-%d", start), nodes, 1000)))
	}
	return h
}

// benchPlan places n allocations with random UUIDs (as real IDs are)
// spread over the nodes.
func benchPlan(prefix string, nodes, n int) *messages.ApplyPlan {
	p := &messages.ApplyPlan{EvalID: prefix}
	for i := range n {
		id, err := uuid.GenerateUUID()
		if err != nil {
			panic(err)
		}
		node := fmt.Sprintf("node-%06d", (i*7919)%nodes)
		a := testAlloc(id, "bench", node, prefix, 10, 10)
		if i > 0 { // the scheduler gives a group's placements one block
			a.AllocatedResources = p.Place[0].AllocatedResources
		}
		p.Place = append(p.Place, a)
	}
	return p
}

// BenchmarkApplyPlan1000 applies plans of 1000 placements to a store that
// holds 100,000 allocations; its 1M variant (BENCH_STATE_1M=1, seeding
// takes a minute) to one that holds a million: the time per plan must not
// grow with the allocations stored.
func BenchmarkApplyPlan1000(b *testing.B) {
	seed := 100_000
	if os.Getenv("BENCH_STATE_1M") != "" {
		seed = 1_000_000
	}
	h := seedBench(b, 10_000, seed)
	logs := make([]*raft.Log, b.N)
	for i := range logs {
		data, err := proto.Marshal(plan(messages.CompactPlan(benchPlan(fmt.Sprintf("bench%06d", i), 10_000, 1000)))) // as the leader writes it
		require.NoError(b, err)
		h.index++
		logs[i] = &raft.Log{Index: h.index, Type: raft.LogCommand, Data: data}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range logs {
		res := h.fsm.Apply(logs[i]).(*messages.ApplyPlanResult)
		if len(res.Placed) != 1000 {
			b.Fatalf("placed %d", len(res.Placed))
		}
	}
}
