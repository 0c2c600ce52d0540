package scheduler

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// coresNode is a ready node of 4000 MHz over two cores, 0 and 1.
func coresNode(id string) *messages.Node {
	n := testNode(id, 4000, 8192)
	n.NodeResources.Cpu.TotalCpuCores = 2
	n.NodeResources.Cpu.ReservableCpuCores = []uint32{0, 1}
	return n
}

// coresJob is a service job whose one task reserves cores.
func coresJob(id string, count, cores int32) *messages.Job {
	j := testJob(id, jobTypeService, count)
	j.TaskGroups[0].Tasks[0].Resources = &messages.Resources{CPU: 100, MemoryMB: 64, Cores: cores}
	return j
}

// holdingCores is a running alloc of job on node whose task reserves cores.
func holdingCores(job *messages.Job, node string, index uint32, cores ...uint32) *messages.Allocation {
	a := testAlloc(job, node, index)
	a.AllocatedResources = allocated(job.TaskGroups[0])
	a.AllocatedResources.Tasks["server"].Cpu = &messages.AllocatedCpuResources{
		CpuShares: 2000 * int64(len(cores)), ReservedCores: cores}
	return a
}

// placedCores lists, per placement, task server's reserved cores and CPU.
func placedCores(plan *messages.ApplyPlan) (cores [][]uint32, cpu []int64) {
	for _, a := range plan.Place {
		c := a.AllocatedResources.Tasks["server"].Cpu
		cores, cpu = append(cores, c.ReservedCores), append(cpu, c.CpuShares)
	}
	return cores, cpu
}

// TestCoresReservedOnNode: a task with cores gets core IDs of the node
// that no other live alloc, earlier placement of the plan or pending
// placement holds, and the node's MHz per core for each (not its cpu);
// a node without enough free cores is exhausted in "cores".
func TestCoresReservedOnNode(t *testing.T) {
	other := coresJob("other", 1, 1)
	stopped := holdingCores(other, "n1", 0, 0)
	stopped.DesiredStatus, stopped.ClientStatus = messages.AllocDesiredStatusStop, messages.AllocClientStatusComplete
	pendingPlan := &messages.ApplyPlan{Place: []*messages.Allocation{holdingCores(other, "n1", 5, 0)}}
	busy := testAlloc(testJob("busy", jobTypeService, 1), "n1", 0) // 3000 MHz, no cores
	busy.AllocatedResources.Tasks["server"].Cpu.CpuShares = 3000
	tests := []struct {
		name      string
		count     int32
		cores     int32
		existing  []*messages.Allocation
		pending   *messages.ApplyPlan
		wantCores [][]uint32
		wantDims  map[string]int32 // the failed placement's DimensionExhausted; nil: all placed
	}{
		{"two tasks get different cores", 2, 1, nil, nil, [][]uint32{{0}, {1}}, nil},
		{"a third is infeasible", 3, 1, nil, nil, [][]uint32{{0}, {1}}, map[string]int32{dimCores: 1}},
		{"both cores in one task", 1, 2, nil, nil, [][]uint32{{0, 1}}, nil},
		{"a live alloc's core is taken", 2, 1, []*messages.Allocation{holdingCores(other, "n1", 0, 0)}, nil,
			[][]uint32{{1}}, map[string]int32{dimCores: 1}},
		{"a stopped alloc frees its core", 2, 1, []*messages.Allocation{stopped}, nil, [][]uint32{{0}, {1}}, nil},
		{"a pending placement's core is taken", 2, 1, nil, pendingPlan, [][]uint32{{1}}, map[string]int32{dimCores: 1}},
		{"cores count as MHz per core", 1, 1, []*messages.Allocation{busy}, nil, nil, map[string]int32{dimCPU: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := coresJob("web", tt.count, tt.cores)
			s := newMemSnapshot([]*messages.Node{coresNode("n1")}, job)
			for _, a := range tt.existing {
				s.AddAlloc(a)
			}
			opts := testOpts(1)
			if tt.pending != nil {
				opts.Pending = newPending()
				opts.Pending.Add(tt.pending)
			}
			plan := processWith(t, s, testEval(job), opts)
			cores, cpu := placedCores(plan)
			require.Equal(t, tt.wantCores, cores)
			for i := range cpu {
				require.Equal(t, 2000*int64(tt.cores), cpu[i], "cores x 4000/2 MHz, not the task's 100")
			}
			if tt.wantDims == nil {
				require.Empty(t, plan.EvalUpdate.FailedTGAllocs)
				return
			}
			m := plan.EvalUpdate.FailedTGAllocs["web"]
			require.NotNil(t, m)
			require.Equal(t, tt.wantDims, m.DimensionExhausted)
			require.Equal(t, int32(1), m.NodesExhausted)
		})
	}
}

// TestCoresTwoTasksOfOneGroup: two tasks of one alloc get different cores.
func TestCoresTwoTasksOfOneGroup(t *testing.T) {
	job := coresJob("web", 1, 1)
	second := proto.Clone(job.TaskGroups[0].Tasks[0]).(*messages.Task)
	second.Name = "sidecar"
	job.TaskGroups[0].Tasks = append(job.TaskGroups[0].Tasks, second)
	plan := processWith(t, newMemSnapshot([]*messages.Node{coresNode("n1")}, job), testEval(job), testOpts(1))
	require.Len(t, plan.Place, 1)
	tasks := plan.Place[0].AllocatedResources.Tasks
	require.Equal(t, []uint32{0}, tasks["server"].Cpu.ReservedCores)
	require.Equal(t, []uint32{1}, tasks["sidecar"].Cpu.ReservedCores)
}

// TestCoresFreedByTheUpdateThatReplaces: a destructive update on a node
// whose one free core the old alloc holds stops it and gives its core to
// the replacement, in one plan.
func TestCoresFreedByTheUpdateThatReplaces(t *testing.T) {
	n := coresNode("n1")
	n.NodeResources.Cpu.ReservableCpuCores = []uint32{1} // core 0 is the client's
	old := coresJob("web", 1, 1)
	job := proto.Clone(old).(*messages.Job)
	job.Version = 1
	job.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"}
	s := newMemSnapshot([]*messages.Node{n}, old)
	s.AddJob(job)
	s.AddAlloc(holdingCores(old, "n1", 0, 1))
	plan := processWith(t, s, testEval(job), testOpts(1))
	require.Len(t, plan.Stop, 1)
	cores, _ := placedCores(plan)
	require.Equal(t, [][]uint32{{1}}, cores)
}

// TestCoresSystemJob: a system job's task gets a free core on each node,
// and a node with none left is exhausted in "cores".
func TestCoresSystemJob(t *testing.T) {
	job := coresJob("sys", 1, 2)
	job.Type = jobTypeSystem
	other := coresJob("other", 1, 1)
	s := newMemSnapshot([]*messages.Node{coresNode("n1"), coresNode("n2")}, job)
	s.AddAlloc(holdingCores(other, "n2", 0, 1))
	plan := processWith(t, s, testEval(job), testOpts(1))
	cores, _ := placedCores(plan)
	require.Equal(t, [][]uint32{{0, 1}}, cores)
	require.Equal(t, "n1", plan.Place[0].NodeID)
	require.Equal(t, map[string]int32{dimCores: 1}, plan.EvalUpdate.FailedTGAllocs["web"].DimensionExhausted)
}

// coresLoggedSnap is a loggedSnap that keeps the nodes' reserved cores
// (NodeCoresSource), as cluster/state does.
type coresLoggedSnap struct{ *loggedSnap }

func (s coresLoggedSnap) NodeReservedCores(nodeID string) []uint32 {
	var out []uint32
	for _, a := range s.AllocsByNode(nodeID) {
		if !a.TerminalStatus() {
			out = append(out, allocCores(a)...)
		}
	}
	slices.Sort(out)
	return out
}

// TestCoresWithNodeCache: with the NodeCache and a snapshot that keeps
// the reserved cores, plan after plan is the plan made without either,
// and no core is ever given twice on a node.
func TestCoresWithNodeCache(t *testing.T) {
	nodes := make([]*messages.Node, 8)
	for i := range nodes {
		nodes[i] = coresNode(fmt.Sprintf("n%d", i))
	}
	s := coresLoggedSnap{&loggedSnap{MemSnapshot: newMemSnapshot(nodes)}}
	cache := newNodeCache()
	pending, prev := newPending(), (*messages.ApplyPlan)(nil)
	for round := range 6 {
		job := coresJob(fmt.Sprint("job", round), 3, 1)
		s.AddJob(job)
		opts := prefixedOpts(uint64(round), fmt.Sprint("c", round))
		opts.Pending = pending
		want := processWith(t, hideUsage{s.MemSnapshot}, testEval(job), opts)
		opts = prefixedOpts(uint64(round), fmt.Sprint("c", round))
		opts.Pending, opts.NodeCache = pending, cache
		got := processWith(t, s, testEval(job), opts)
		require.True(t, proto.Equal(want, got), "round %d: the cache or the kept cores changed the plan", round)
		pending.Add(got)
		if prev != nil {
			s.apply(prev)
			pending.Remove(prev)
		}
		prev = got
	}
	s.apply(prev)
	held := map[string][]uint32{}
	for _, n := range nodes {
		for _, a := range s.AllocsByNode(n.ID) {
			for _, c := range allocCores(a) {
				require.NotContains(t, held[n.ID], c, "core %d of %s given twice", c, n.ID)
				held[n.ID] = append(held[n.ID], c)
			}
		}
	}
	require.Len(t, s.allocs, 16, "8 nodes x 2 cores: 16 of the 18 asked placed")
}

// TestCoresPreemption: preemption frees no cores. A group with cores
// preempts for CPU on a node where its core is free, and keeps the core
// free; on a node whose cores low-priority allocs hold it places nothing
// (evicting for CPU there would leave it without a core of its own).
func TestCoresPreemption(t *testing.T) {
	cfg := &messages.SchedulerConfiguration{PreemptionConfig: &messages.PreemptionConfig{ServiceSchedulerEnabled: true}}
	for _, tc := range []struct {
		name      string
		lowCores  [][]uint32 // per low-priority alloc on n1, each of 1500 MHz
		wantCores [][]uint32
	}{
		{"a free core: evicts for cpu", [][]uint32{nil, nil}, [][]uint32{{0}}},
		{"every core held: nothing", [][]uint32{{0}, {1}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := coresJob("web", 1, 1)
			job.Priority = 80
			s := newMemSnapshot([]*messages.Node{coresNode("n1")}, job)
			for i, cores := range tc.lowCores {
				low := coresJob(fmt.Sprint("low", i), 1, int32(len(cores)))
				low.Priority = 10
				s.AddJob(low)
				a := holdingCores(low, "n1", 0, cores...)
				a.ID = fmt.Sprint("low-", i)
				a.AllocatedResources.Tasks["server"].Cpu.CpuShares = 1500
				s.AddAlloc(a)
			}
			plan := processWith(t, configSnap{s, cfg}, testEval(job), testOpts(1))
			cores, _ := placedCores(plan)
			require.Equal(t, tc.wantCores, cores)
			if tc.wantCores == nil {
				require.Empty(t, plan.Preemptions)
			} else {
				require.NotEmpty(t, plan.Preemptions)
			}
		})
	}
}
