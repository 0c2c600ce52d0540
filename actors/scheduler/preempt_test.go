package scheduler

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func TestChooseVictims(t *testing.T) {
	v := func(prio int32, cpu, mem int64) victim {
		return victim{alloc: &messages.Allocation{ID: fmt.Sprintf("p%d-%d-%d", prio, cpu, mem)}, prio: prio, res: resources{cpu: cpu, mem: mem}}
	}
	tests := []struct {
		name string
		vs   []victim
		need resources
		must []int
		want []int // nil with ok false
	}{
		{"the one the size of the need", []victim{v(10, 100, 0), v(10, 500, 0), v(10, 1000, 0)}, resources{cpu: 500}, nil, []int{1}},
		{"one that covers over two that add up", []victim{v(10, 250, 0), v(10, 260, 0), v(10, 1000, 0)}, resources{cpu: 500}, nil, []int{2}},
		{"lowest priority first", []victim{v(10, 600, 0), v(20, 600, 0)}, resources{cpu: 500}, nil, []int{0}},
		{"a lower one that is not needed is dropped", []victim{v(10, 300, 0), v(20, 600, 0)}, resources{cpu: 500}, nil, []int{1}},
		{"three small ones dropped for the one that suffices", []victim{v(10, 100, 0), v(10, 100, 0), v(10, 100, 0), v(50, 500, 0)},
			resources{cpu: 400}, nil, []int{3}},
		{"lower ones kept while needed", []victim{v(10, 200, 0), v(10, 200, 0), v(20, 200, 0)}, resources{cpu: 500}, nil, []int{1, 0, 2}},
		{"both dimensions from one", []victim{v(10, 500, 0), v(10, 0, 500), v(10, 500, 500)}, resources{cpu: 500, mem: 500}, nil, []int{2}},
		{"both dimensions from two", []victim{v(10, 500, 0), v(10, 0, 500)}, resources{cpu: 500, mem: 500}, nil, []int{0, 1}},
		{"not enough", []victim{v(10, 300, 0), v(20, 300, 0)}, resources{cpu: 700}, nil, nil},
		{"frees nothing needed", []victim{v(10, 0, 900)}, resources{cpu: 100}, nil, nil},
		{"nothing needed", []victim{v(10, 300, 0)}, resources{cpu: -5}, nil, []int{}},
		{"must are kept", []victim{v(10, 10, 0), v(10, 400, 0)}, resources{cpu: 300}, []int{0}, []int{0, 1}},
		{"must suffice", []victim{v(10, 400, 0), v(10, 400, 0)}, resources{cpu: 300}, []int{1}, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := chooseVictims(tt.vs, tt.need, tt.must)
			if tt.want == nil {
				require.False(t, ok)
				return
			}
			require.True(t, ok)
			require.ElementsMatch(t, tt.want, got)
		})
	}
}

// configSnap gives a MemSnapshot a scheduler configuration.
type configSnap struct {
	*MemSnapshot
	cfg *messages.SchedulerConfiguration
}

func (s configSnap) SchedulerConfig() *messages.SchedulerConfiguration { return s.cfg }

// lowAlloc is a running allocation of its own job "low<i>" (ID "low-<i>").
type lowAlloc struct {
	node string
	prio int32
	cpu  int32
}

func addLowAllocs(s *MemSnapshot, low []lowAlloc) {
	for i, l := range low {
		j := testJob(fmt.Sprintf("low%d", i), jobTypeService, 1)
		j.Priority = l.prio
		j.TaskGroups[0].Tasks[0].Resources.CPU = l.cpu
		s.AddJob(j)
		a := testAlloc(j, l.node, 0)
		a.ID = fmt.Sprintf("low-%d", i)
		s.AddAlloc(a)
	}
}

// TestPreemption: a placement no node can take evicts lower-priority
// allocations, where the job's scheduler may preempt, on the node where
// that costs the least total priority, then the fewest evictions; never
// allocations of jobs less than 10 priority points lower; nothing when a
// plain placement fits.
func TestPreemption(t *testing.T) {
	service := &messages.PreemptionConfig{ServiceSchedulerEnabled: true}
	tests := []struct {
		name     string
		typ      string
		prio     int32
		config   *messages.PreemptionConfig // nil: the snapshot has none (defaults)
		nodes    int                        // of 1000 MHz
		low      []lowAlloc
		wantNode string   // "" when the placement fails
		evicted  []string // in the order they are preempted
		examined int32    // NodesPreempted of a failure
	}{
		{name: "service does not preempt by default", typ: jobTypeService, prio: 50, nodes: 1,
			low: []lowAlloc{{"n00", 20, 800}}},
		{name: "service preempts when enabled", typ: jobTypeService, prio: 50, config: service, nodes: 1,
			low: []lowAlloc{{"n00", 20, 800}}, wantNode: "n00", evicted: []string{"low-0"}},
		{name: "a gap of 9 refuses", typ: jobTypeService, prio: 50, config: service, nodes: 1,
			low: []lowAlloc{{"n00", 41, 800}}},
		{name: "a gap of 10 preempts", typ: jobTypeService, prio: 50, config: service, nodes: 1,
			low: []lowAlloc{{"n00", 40, 800}}, wantNode: "n00", evicted: []string{"low-0"}},
		{name: "batch not with service only", typ: jobTypeBatch, prio: 50, config: service, nodes: 1,
			low: []lowAlloc{{"n00", 20, 800}}},
		{name: "batch when enabled", typ: jobTypeBatch, prio: 50, config: &messages.PreemptionConfig{BatchSchedulerEnabled: true}, nodes: 1,
			low: []lowAlloc{{"n00", 20, 800}}, wantNode: "n00", evicted: []string{"low-0"}},
		{name: "system preempts by default", typ: jobTypeSystem, prio: 50, nodes: 1,
			low: []lowAlloc{{"n00", 20, 800}}, wantNode: "n00", evicted: []string{"low-0"}},
		{name: "sysbatch does not preempt by default (Nomad's default)", typ: jobTypeSysBatch, prio: 50, nodes: 1,
			low: []lowAlloc{{"n00", 20, 800}}},
		{name: "sysbatch when enabled", typ: jobTypeSysBatch, prio: 50, config: &messages.PreemptionConfig{SysBatchSchedulerEnabled: true}, nodes: 1,
			low: []lowAlloc{{"n00", 20, 800}}, wantNode: "n00", evicted: []string{"low-0"}},
		{name: "system not when disabled", typ: jobTypeSystem, prio: 50, config: service, nodes: 1,
			low: []lowAlloc{{"n00", 20, 800}}},
		{name: "nothing evicted when a plain placement fits", typ: jobTypeService, prio: 50, config: service, nodes: 2,
			low: []lowAlloc{{"n00", 20, 800}}, wantNode: "n01"},
		{name: "the node with the least priority to evict", typ: jobTypeService, prio: 50, config: service, nodes: 2,
			low: []lowAlloc{{"n00", 30, 800}, {"n01", 20, 800}}, wantNode: "n01", evicted: []string{"low-1"}},
		{name: "equal priority: the node with the fewest evictions", typ: jobTypeService, prio: 50, config: service, nodes: 2,
			low: []lowAlloc{{"n00", 10, 450}, {"n00", 10, 450}, {"n01", 20, 900}}, wantNode: "n01", evicted: []string{"low-2"}},
		{name: "priority before the number of evictions", typ: jobTypeService, prio: 50, config: service, nodes: 2,
			low: []lowAlloc{{"n00", 10, 450}, {"n00", 10, 450}, {"n01", 25, 900}}, wantNode: "n00", evicted: []string{"low-0", "low-1"}},
		{name: "on a node, the cheapest set", typ: jobTypeService, prio: 50, config: service, nodes: 1,
			low: []lowAlloc{{"n00", 10, 300}, {"n00", 20, 600}}, wantNode: "n00", evicted: []string{"low-1"}},
		{name: "not enough of lower priority", typ: jobTypeService, prio: 50, config: service, nodes: 1,
			low: []lowAlloc{{"n00", 45, 500}, {"n00", 10, 400}}, examined: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := testJob("high", tt.typ, 1)
			job.Priority = tt.prio
			job.TaskGroups[0].Tasks[0].Resources.CPU = 600
			mem := newMemSnapshot(nil, job)
			for i := range tt.nodes {
				mem.AddNode(testNode(fmt.Sprintf("n%02d", i), 1000, 8192))
			}
			addLowAllocs(mem, tt.low)
			var snap Snapshot = mem
			if tt.config != nil {
				snap = configSnap{mem, &messages.SchedulerConfiguration{PreemptionConfig: tt.config}}
			}
			plan := mustProcess(t, snap, testEval(job), 1)
			if tt.wantNode == "" {
				require.Empty(t, plan.Place)
				require.Empty(t, plan.Preemptions)
				require.Contains(t, plan.EvalUpdate.FailedTGAllocs, "web")
				require.Equal(t, tt.examined, plan.EvalUpdate.FailedTGAllocs["web"].NodesPreempted)
				return
			}
			require.Len(t, plan.Place, 1)
			placed := plan.Place[0]
			require.Equal(t, tt.wantNode, placed.NodeID)
			require.Empty(t, plan.EvalUpdate.FailedTGAllocs)
			requirePreempted(t, plan, placed, tt.evicted)
		})
	}
}

// requirePreempted checks that plan evicts exactly ids for placed, each
// with an evaluation for its job.
func requirePreempted(t *testing.T, plan *messages.ApplyPlan, placed *messages.Allocation, ids []string) {
	t.Helper()
	var got []string
	for _, p := range plan.Preemptions {
		got = append(got, p.AllocID)
		require.Equal(t, messages.AllocDesiredStatusEvict, p.DesiredStatus)
		require.Equal(t, placed.ID, p.PreemptedByAllocation)
		require.Equal(t, descPreemptedPrefix+placed.ID, p.DesiredDescription)
	}
	require.Equal(t, ids, got)
	require.Equal(t, ids, placed.PreemptedAllocations)
	var evals []string
	for _, e := range plan.NewEvals {
		if e.TriggeredBy == triggerPreemption {
			require.Equal(t, messages.EvalStatusPending, e.Status)
			evals = append(evals, e.JobID)
		}
	}
	require.Len(t, evals, len(ids), "one evaluation per preempted job (each test alloc has its own)")
}

// TestPreemptionCostsNothingWhenPlacementsFit: the preemption state is
// never made while plain placements succeed.
func TestPreemptionCostsNothingWhenPlacementsFit(t *testing.T) {
	job := testJob("high", jobTypeService, 3)
	job.Priority = 90
	mem := newMemSnapshot(testNodes(3), job)
	addLowAllocs(mem, []lowAlloc{{"n00", 10, 100}})
	snap := configSnap{mem, &messages.SchedulerConfiguration{PreemptionConfig: &messages.PreemptionConfig{ServiceSchedulerEnabled: true}}}
	p := newPlanner(snap, testEval(job), testOpts(1))
	require.NoError(t, p.run())
	require.Len(t, p.plan.Place, 3)
	require.Nil(t, p.evict)
	require.Empty(t, p.plan.Preemptions)
}

// TestPreemptionFreesAStaticPort: a static port held by a lower-priority
// allocation is freed by evicting it, though CPU and memory fit.
func TestPreemptionFreesAStaticPort(t *testing.T) {
	port := func(j *messages.Job) {
		j.TaskGroups[0].Networks = []*messages.NetworkResource{{ReservedPorts: []*messages.Port{{Label: "http", Value: 8080}}}}
	}
	job := testJob("high", jobTypeSystem, 0)
	job.Priority = 50
	port(job)
	mem := newMemSnapshot(testNodes(1), job)
	low := testJob("low", jobTypeService, 1)
	low.Priority = 20
	port(low)
	mem.AddJob(low)
	a := testAlloc(low, "n00", 0)
	a.AllocatedResources.Shared = &messages.AllocatedSharedResources{Networks: low.TaskGroups[0].Networks}
	mem.AddAlloc(a)
	plan := mustProcess(t, mem, testEval(job), 1)
	require.Len(t, plan.Place, 1)
	requirePreempted(t, plan, plan.Place[0], []string{a.ID})
}

// TestDryRunCountsPreemptions: a job plan counts each group's preemptions.
func TestDryRunCountsPreemptions(t *testing.T) {
	job := testJob("high", jobTypeSystem, 0)
	job.Priority = 50
	job.TaskGroups[0].Tasks[0].Resources.CPU = 600
	mem := newMemSnapshot([]*messages.Node{testNode("n00", 1000, 8192)})
	addLowAllocs(mem, []lowAlloc{{"n00", 10, 450}, {"n00", 10, 450}})
	res, err := DryRun(mem, job, testEval(job), testOpts(1))
	require.NoError(t, err)
	require.EqualValues(t, 2, res.Updates["web"].Preemptions)
	require.EqualValues(t, 1, res.Updates["web"].Place)
}

// TestPreemptionFreesDevices: GPUs held by lower-priority allocations are
// freed by evicting the fewest of them, lowest priority first, though
// CPU and memory fit.
func TestPreemptionFreesDevices(t *testing.T) {
	job := gpuJob("high", 1, gpuReq("nvidia/gpu", 2))
	job.Type, job.Priority = jobTypeSystem, 50
	mem := newMemSnapshot([]*messages.Node{gpuNode("n00", gpus(modelH100, "81559", "g", 3))}, job)
	for _, h := range []struct {
		id   string
		prio int32
		ids  []string
	}{{"low-a", 30, []string{"g0"}}, {"low-b", 10, []string{"g1"}}, {"low-c", 45, []string{"g2"}}} {
		a := gpuHolder(h.id, "n00", modelH100, h.ids...)
		j := testJob(a.JobID, jobTypeService, 1)
		j.Priority = h.prio
		mem.AddJob(j)
		mem.AddAlloc(a)
	}
	plan := mustProcess(t, mem, testEval(job), 1)
	require.Len(t, plan.Place, 1)
	requirePreempted(t, plan, plan.Place[0], []string{"low-b", "low-a"})
	require.ElementsMatch(t, []string{"g0", "g1"}, deviceIDs(plan.Place[0]))
}
