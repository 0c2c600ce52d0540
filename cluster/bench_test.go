package cluster

import (
	"context"
	"fmt"
	"testing"

	uuid "github.com/hashicorp/go-uuid"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// BenchmarkRaftApplyPlan1000 commits 1000-allocation plans through a
// single on-disk raft server (boltdb, fsync) onto 10,000 nodes: the whole
// path the integrator's million-allocation run takes, minus scheduling.
func BenchmarkRaftApplyPlan1000(b *testing.B) {
	s := startBenchServer(b)
	const nodes = 10_000
	for i := range nodes {
		_, _, err := s.Apply(context.Background(), &messages.Command{Cmd: &messages.Command_RegisterNode{RegisterNode: &messages.RegisterNode{
			Node: &messages.Node{ID: fmt.Sprintf("node-%05d", i), Status: "ready", NodeResources: &messages.NodeResources{
				Cpu: &messages.NodeCpuResources{CpuShares: 1 << 40}, Memory: &messages.NodeMemoryResources{MemoryMB: 1 << 40},
			}},
		}}})
		require.NoError(b, err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for p := range b.N {
		b.StopTimer()
		cmd := benchPlan(p, nodes)
		b.StartTimer()
		resp, _, err := s.Apply(context.Background(), cmd)
		require.NoError(b, err)
		require.Len(b, resp.(*messages.ApplyPlanResult).Placed, 1000)
	}
}

func benchPlan(p, nodes int) *messages.Command {
	pl := &messages.ApplyPlan{EvalID: fmt.Sprint("eval-", p)}
	for i := range 1000 {
		id, _ := uuid.GenerateUUID()
		pl.Place = append(pl.Place, &messages.Allocation{
			ID: id, Namespace: "default", JobID: "bench", EvalID: pl.EvalID, TaskGroup: "web",
			Name: fmt.Sprintf("bench.web[%d]", p*1000+i), NodeID: fmt.Sprintf("node-%05d", (p*1000+i)%nodes),
			AllocatedResources: &messages.AllocatedResources{Tasks: map[string]*messages.AllocatedTaskResources{
				"app": {Cpu: &messages.AllocatedCpuResources{CpuShares: 100}, Memory: &messages.AllocatedMemoryResources{MemoryMB: 64}},
			}},
		})
	}
	return &messages.Command{Cmd: &messages.Command_ApplyPlan{ApplyPlan: pl}}
}
