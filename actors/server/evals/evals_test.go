package evals

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

var now = time.Unix(1700000000, 0)

// view is a small state: jobs and allocations by ID.
type view struct {
	jobs   []*messages.Job
	allocs []*messages.Allocation
}

func (v *view) Jobs() []*messages.Job { return v.jobs }

func (v *view) JobByID(ns, id string) *messages.Job {
	for _, j := range v.jobs {
		if j.GetNamespace() == ns && j.GetID() == id {
			return j
		}
	}
	return nil
}

func (v *view) AllocByID(id string) *messages.Allocation {
	for _, a := range v.allocs {
		if a.GetID() == id {
			return a
		}
	}
	return nil
}

func (v *view) AllocsByNode(nodeID string) []*messages.Allocation {
	var out []*messages.Allocation
	for _, a := range v.allocs {
		if a.GetNodeID() == nodeID {
			out = append(out, a)
		}
	}
	return out
}

func job(id, typ string, stop bool) *messages.Job {
	return &messages.Job{ID: id, Namespace: "default", Type: typ, Priority: 50, Stop: stop}
}

func alloc(id, jobID, nodeID, client, desired string) *messages.Allocation {
	return &messages.Allocation{ID: id, Namespace: "default", JobID: jobID, NodeID: nodeID,
		ClientStatus: client, DesiredStatus: desired}
}

// brief is what a rule decided, without the fresh IDs.
type brief struct{ Job, Trigger, Node, Why string }

func briefs(evs []*messages.Evaluation) []brief {
	var out []brief
	for _, e := range evs {
		out = append(out, brief{e.GetJobID(), e.GetTriggeredBy(), e.GetNodeID(), e.GetStatusDescription()})
	}
	return out
}

func TestNew(t *testing.T) {
	e := New(job("web", "service", false), JobRegister, "", now)
	require.NotEmpty(t, e.GetID())
	require.Equal(t, &messages.Evaluation{ID: e.GetID(), Namespace: "default", Priority: 50, Type: "service",
		TriggeredBy: "job-register", JobID: "web", Status: "pending",
		CreateTime: now.UnixNano(), ModifyTime: now.UnixNano()}, e)
	require.NotEqual(t, e.GetID(), New(job("web", "service", false), JobRegister, "", now).GetID())
}

func TestForNodeRegistration(t *testing.T) {
	v := &view{jobs: []*messages.Job{job("sys", "system", false), job("web", "service", false), job("old", "system", true)}}
	require.Equal(t, []brief{{"sys", "node-update", "n1", ""}}, briefs(ForNodeRegistration(v, "n1", now)))
	require.Empty(t, ForNodeRegistration(&view{}, "n1", now))
}

func TestForNodeStatus(t *testing.T) {
	v := &view{
		jobs: []*messages.Job{job("web", "service", false), job("batch", "batch", false)},
		allocs: []*messages.Allocation{
			alloc("a1", "web", "n1", "running", "run"),
			alloc("a2", "web", "n1", "pending", "run"),    // same job: one evaluation
			alloc("a3", "batch", "n1", "complete", "run"), // over on the client
			alloc("a4", "gone", "n1", "running", "run"),   // its job is gone
			alloc("a5", "batch", "n2", "running", "run"),  // another node
		},
	}
	require.Equal(t, []brief{{"web", "node-update", "n1", ""}}, briefs(ForNodeStatus(v, "n1", now)))
}

func TestForAllocUpdates(t *testing.T) {
	jobs := []*messages.Job{job("web", "service", false), job("stopped", "service", true)}
	cases := []struct {
		name  string
		old   []*messages.Allocation
		up    []*messages.Allocation
		want  []brief
		freed bool
	}{
		{"failed while meant to run", []*messages.Allocation{alloc("a1", "web", "n1", "running", "run")},
			[]*messages.Allocation{{ID: "a1", ClientStatus: "failed", ClientDescription: "exit 1"}},
			[]brief{{"web", "alloc-failure", "", "allocation a1 failed: exit 1"}}, true},
		{"failed without a description", []*messages.Allocation{alloc("a1", "web", "n1", "running", "run")},
			[]*messages.Allocation{{ID: "a1", ClientStatus: "failed"}},
			[]brief{{"web", "alloc-failure", "", "allocation a1 failed: failed"}}, true},
		{"failed while stopping", []*messages.Allocation{alloc("a1", "web", "n1", "running", "stop")},
			[]*messages.Allocation{{ID: "a1", ClientStatus: "failed"}}, nil, true},
		{"back from unknown", []*messages.Allocation{alloc("a1", "web", "n1", "unknown", "run")},
			[]*messages.Allocation{{ID: "a1", ClientStatus: "running"}},
			[]brief{{"web", "reconnect", "", ""}}, false},
		{"complete", []*messages.Allocation{alloc("a1", "web", "n1", "running", "run")},
			[]*messages.Allocation{{ID: "a1", ClientStatus: "complete"}}, nil, true},
		{"no change", []*messages.Allocation{alloc("a1", "web", "n1", "running", "run")},
			[]*messages.Allocation{{ID: "a1", ClientStatus: "running"}}, nil, false},
		{"unknown allocation", nil, []*messages.Allocation{{ID: "a1", ClientStatus: "failed"}}, nil, false},
		{"stopped job", []*messages.Allocation{alloc("a1", "stopped", "n1", "running", "run")},
			[]*messages.Allocation{{ID: "a1", ClientStatus: "failed"}}, nil, true},
		{"one per job", []*messages.Allocation{alloc("a1", "web", "n1", "running", "run"), alloc("a2", "web", "n1", "running", "run")},
			[]*messages.Allocation{{ID: "a1", ClientStatus: "failed"}, {ID: "a2", ClientStatus: "failed"}},
			[]brief{{"web", "alloc-failure", "", "allocation a1 failed: failed"}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, freed := ForAllocUpdates(&view{jobs: jobs, allocs: c.old}, c.up, now)
			require.Equal(t, c.want, briefs(got))
			require.Equal(t, c.freed, freed)
		})
	}
}

func TestForPlanRefused(t *testing.T) {
	prev := &messages.Evaluation{ID: "e1", Namespace: "default", Priority: 70, Type: "batch", JobID: "b"}
	e := ForPlanRefused(prev, 2*time.Second, now)
	require.Equal(t, &messages.Evaluation{ID: e.GetID(), Namespace: "default", Priority: 70, Type: "batch",
		TriggeredBy: "plan-refused", JobID: "b", Status: "pending", PreviousEval: "e1",
		CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(), WaitUntil: now.Add(2 * time.Second).UnixNano()}, e)
	require.Zero(t, ForPlanRefused(prev, 0, now).GetWaitUntil())
}

func TestForJobAndDrain(t *testing.T) {
	j := job("web", "service", false)
	require.Equal(t, []brief{{"web", "job-deregister", "", ""}, {"web", "node-drain", "n1", ""}},
		briefs([]*messages.Evaluation{ForJob(j, JobDeregister, now), ForNodeDrain(j, "n1", now)}))
}
