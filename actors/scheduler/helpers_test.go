package scheduler

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

// idCalls makes IDs unique across Process calls in one test binary.
var idCalls atomic.Int64

var testNow = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// testOpts returns options with a counter for IDs and a fixed seed.
func testOpts(seed uint64) Options {
	return prefixedOpts(seed, fmt.Sprint(idCalls.Add(1)))
}

// prefixedOpts gives IDs id-<prefix>-00001, id-<prefix>-00002, ...
func prefixedOpts(seed uint64, prefix string) Options {
	n := 0
	return Options{
		Now:   testNow,
		NewID: func() string { n++; return fmt.Sprintf("id-%s-%05d", prefix, n) },
		Rand:  rand.New(rand.NewPCG(seed, seed+1)),
	}
}

func processWith(t *testing.T, snap Snapshot, eval *messages.Evaluation, opts Options) *messages.ApplyPlan {
	t.Helper()
	plan, err := process(snap, eval, opts)
	require.NoError(t, err)
	return plan
}

func testJob(id, typ string, count int32) *messages.Job {
	return &messages.Job{
		ID: id, Name: id, Namespace: "default", Type: typ, Datacenters: []string{"dc1"},
		TaskGroups: []*messages.TaskGroup{{
			Name: "web", Count: count,
			Tasks: []*messages.Task{{Name: "server", Driver: "exec",
				Resources: &messages.Resources{CPU: 500, MemoryMB: 256}}},
		}},
	}
}

func testNode(id string, cpu, memMB int64) *messages.Node {
	return &messages.Node{
		ID: id, Name: "name-" + id, Datacenter: "dc1", Region: "global", NodePool: "default",
		Status: messages.NodeStatusReady, SchedulingEligibility: messages.NodeSchedulingEligible,
		Drivers:    map[string]*messages.DriverInfo{"exec": {Detected: true, Healthy: true}},
		Attributes: map[string]string{"kernel.name": "linux", "cpu.arch": "amd64"},
		Meta:       map[string]string{},
		NodeResources: &messages.NodeResources{
			Cpu:    &messages.NodeCpuResources{CpuShares: cpu},
			Memory: &messages.NodeMemoryResources{MemoryMB: memMB},
			Disk:   &messages.NodeDiskResources{DiskMB: 10000},
		},
	}
}

func testNodes(n int) []*messages.Node {
	nodes := make([]*messages.Node, n)
	for i := range nodes {
		nodes[i] = testNode(fmt.Sprintf("n%02d", i), 4000, 8192)
	}
	return nodes
}

// testAlloc is a running alloc of job's first group at index on node.
func testAlloc(job *messages.Job, node string, index uint32) *messages.Allocation {
	tg := job.TaskGroups[0]
	return &messages.Allocation{
		ID: fmt.Sprintf("a-%s-%d", node, index), Namespace: job.Namespace, JobID: job.ID,
		JobVersion: job.Version, TaskGroup: tg.Name, Name: allocName(job.ID, tg.Name, index),
		Index: index, NodeID: node, AllocatedResources: allocated(tg),
		DesiredStatus: messages.AllocDesiredStatusRun, ClientStatus: messages.AllocClientStatusRunning,
		ModifyTime: testNow.Add(-time.Minute).UnixNano(),
	}
}

func testEval(job *messages.Job) *messages.Evaluation {
	return &messages.Evaluation{ID: "eval-1", Namespace: job.Namespace, JobID: job.ID,
		Type: job.Type, TriggeredBy: "job-register", Status: messages.EvalStatusPending, Priority: 50}
}

func mustProcess(t *testing.T, snap Snapshot, eval *messages.Evaluation, seed uint64) *messages.ApplyPlan {
	t.Helper()
	plan, err := process(snap, eval, testOpts(seed))
	require.NoError(t, err)
	require.NotNil(t, plan.EvalUpdate)
	return plan
}

func placedNames(plan *messages.ApplyPlan) []string {
	var out []string
	for _, a := range plan.Place {
		out = append(out, a.Name)
	}
	return out
}

func stopsByID(plan *messages.ApplyPlan) map[string]*messages.AllocStopUpdate {
	out := map[string]*messages.AllocStopUpdate{}
	for _, s := range plan.Stop {
		out[s.AllocID] = s
	}
	return out
}

// hideUsage hides MemSnapshot's NodeUsage so Process sums AllocsByNode.
type hideUsage struct{ Snapshot }

func (h hideUsage) JobVersion(namespace, id string, version uint64) *messages.Job {
	return h.Snapshot.(JobVersionSource).JobVersion(namespace, id, version)
}

// changeTasks makes job's next version one whose tasks differ, so that its
// running allocations are replaced, not updated in place.
func changeTasks(job *messages.Job, version uint64) {
	job.Version = version
	for _, tg := range job.TaskGroups {
		for _, task := range tg.Tasks {
			if task.Env == nil {
				task.Env = map[string]string{}
			}
			task.Env["VERSION"] = fmt.Sprint(version)
		}
	}
}

// evalStore is the evaluations of a fake StateView, in the order written.
// Its users take mu to change them.
type evalStore struct {
	mu    sync.Mutex
	evals map[string]*messages.Evaluation
	order []string // evaluation IDs as written
}

func (s *evalStore) EvalByID(id string) *messages.Evaluation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.evals[id]
}

func (s *evalStore) EvalsByStatus(status string) []*messages.Evaluation {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*messages.Evaluation
	for _, id := range s.order {
		if s.evals[id].GetStatus() == status {
			out = append(out, s.evals[id])
		}
	}
	return out
}
