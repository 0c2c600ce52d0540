package state

import (
	"fmt"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

const testNow = int64(1_700_000_000_000_000_000)

// harness drives an FSM with raft log entries and records its events.
type harness struct {
	t      testing.TB
	fsm    *FSM
	index  uint64
	events []Event
}

func newHarness(t testing.TB) *harness {
	h := &harness{t: t, fsm: NewFSM(NewStore(), nil)}
	h.fsm.OnApply(func(ev Event) { h.events = append(h.events, ev) })
	return h
}

// apply encodes cmd as a raft log entry and applies it.
func (h *harness) apply(cmd *messages.Command) any {
	if cmd.Time == 0 {
		cmd.Time = testNow
	}
	data, err := proto.Marshal(cmd)
	require.NoError(h.t, err)
	h.index++
	return h.fsm.Apply(&raft.Log{Index: h.index, Type: raft.LogCommand, Data: data})
}

func (h *harness) snap() *Snap { return h.fsm.store.Snapshot() }

func (h *harness) lastEvent() Event {
	require.NotEmpty(h.t, h.events)
	return h.events[len(h.events)-1]
}

func testJob(id string, cpu, mem int32) *messages.Job {
	return &messages.Job{
		ID: id, Name: id, Namespace: "default", Type: "service", Priority: 50,
		Datacenters: []string{"dc1"},
		TaskGroups: []*messages.TaskGroup{{
			Name: "web", Count: 1,
			Tasks: []*messages.Task{{Name: "app", Driver: "exec", Resources: &messages.Resources{CPU: cpu, MemoryMB: mem}}},
		}},
	}
}

func testEval(id, jobID, status string) *messages.Evaluation {
	return &messages.Evaluation{ID: id, Namespace: "default", JobID: jobID, Status: status, TriggeredBy: "job-register", Type: "service"}
}

func testNode(id string, cpu, mem int64) *messages.Node {
	return &messages.Node{
		ID: id, Name: "name-" + id, Datacenter: "dc1", Status: messages.NodeStatusReady,
		NodeResources: &messages.NodeResources{
			Cpu:    &messages.NodeCpuResources{CpuShares: cpu},
			Memory: &messages.NodeMemoryResources{MemoryMB: mem},
		},
	}
}

func testAlloc(id, jobID, nodeID, evalID string, cpu, mem int64) *messages.Allocation {
	return &messages.Allocation{
		ID: id, Namespace: "default", JobID: jobID, NodeID: nodeID, EvalID: evalID, TaskGroup: "web",
		Name: fmt.Sprintf("%s.web[0]", jobID),
		AllocatedResources: &messages.AllocatedResources{Tasks: map[string]*messages.AllocatedTaskResources{
			"app": {Cpu: &messages.AllocatedCpuResources{CpuShares: cpu}, Memory: &messages.AllocatedMemoryResources{MemoryMB: mem}},
		}},
	}
}

func registerJob(j *messages.Job, e *messages.Evaluation) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_RegisterJob{RegisterJob: &messages.RegisterJob{Job: j, Eval: e}}}
}

func registerNode(n *messages.Node) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_RegisterNode{RegisterNode: &messages.RegisterNode{Node: n}}}
}

func plan(p *messages.ApplyPlan) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_ApplyPlan{ApplyPlan: p}}
}

func clientUpdate(allocs ...*messages.Allocation) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_UpdateAllocsFromClient{UpdateAllocsFromClient: &messages.UpdateAllocsFromClient{Allocs: allocs}}}
}

func rawLog(index uint64, data []byte) *raft.Log {
	return &raft.Log{Index: index, Type: raft.LogCommand, Data: data}
}

func cloneTestNode(n *messages.Node) *messages.Node { return proto.Clone(n).(*messages.Node) }
