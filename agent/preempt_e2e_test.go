package agent

import (
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/state"
)

// TestPreemptionThroughNomadsClient: with service preemption turned on
// through the configuration API, a high-priority job that does not fit
// beside a low-priority one on the dev node evicts it: job plan names the
// allocation it would preempt, the low one ends with DesiredStatus evict
// and PreemptedByAllocation, the high one lists it in
// PreemptedAllocations and runs, and the low job gets an evaluation.
func TestPreemptionThroughNomadsClient(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	capCPU, _, _ := state.NodeCapacity(a.Store().Snapshot().NodeByID(a.Node().GetID()))
	cpu := int(capCPU * 6 / 10) // two of them do not fit
	newJob := func(id string, priority int) *nomad.Job {
		job := nomad.NewServiceJob(id, id, "global", priority)
		tg := nomad.NewTaskGroup("g", 1)
		task := nomad.NewTask("t", "exec").SetConfig("command", "/bin/sh").
			SetConfig("args", []string{"-c", "while true; do sleep 0.2; done"}).
			Require(&nomad.Resources{CPU: ptr(cpu), MemoryMB: ptr(32)})
		task.KillTimeout = ptr(2 * time.Second)
		tg.AddTask(task)
		job.AddTaskGroup(tg)
		return job
	}

	_, _, err = c.Operator().SchedulerSetConfiguration(&nomad.SchedulerConfiguration{SchedulerAlgorithm: nomad.SchedulerAlgorithmBinpack,
		PreemptionConfig: nomad.PreemptionConfig{SystemSchedulerEnabled: true, SysBatchSchedulerEnabled: true, ServiceSchedulerEnabled: true}}, nil)
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(newJob("low", 20), nil)
	require.NoError(t, err)
	low := waitAllocStatus(t, c, "low", "running")

	plan, _, err := c.Jobs().Plan(newJob("high", 80), false, nil)
	require.NoError(t, err)
	require.Empty(t, plan.FailedTGAllocs)
	require.Len(t, plan.Annotations.PreemptedAllocs, 1)
	require.Equal(t, low.ID, plan.Annotations.PreemptedAllocs[0].ID)
	require.EqualValues(t, 1, plan.Annotations.DesiredTGUpdates["g"].Preemptions)

	_, _, err = c.Jobs().Register(newJob("high", 80), nil)
	require.NoError(t, err)
	high := waitAllocStatus(t, c, "high", "running")
	full, _, err := c.Allocations().Info(high.ID, nil)
	require.NoError(t, err)
	require.Equal(t, []string{low.ID}, full.PreemptedAllocations)

	evicted := waitAlloc(t, c, low.ID, func(al *nomad.Allocation) bool { return al.ClientStatus == "complete" })
	require.Equal(t, "evict", evicted.DesiredStatus)
	require.Equal(t, high.ID, evicted.PreemptedByAllocation)
	require.Equal(t, "Preempted by alloc ID "+high.ID, evicted.DesiredDescription)

	evals, _, err := c.Jobs().Evaluations("low", nil)
	require.NoError(t, err)
	var triggers []string
	for _, e := range evals {
		triggers = append(triggers, e.TriggeredBy)
	}
	require.Contains(t, triggers, "preemption", "the preempted job is evaluated again")
}

// waitAlloc polls an allocation until ok holds, within a deadline.
func waitAlloc(t *testing.T, c *nomad.Client, id string, ok func(*nomad.Allocation) bool) *nomad.Allocation {
	t.Helper()
	var last *nomad.Allocation
	require.Eventually(t, func() bool {
		al, _, err := c.Allocations().Info(id, nil)
		if err != nil {
			return false
		}
		last = al
		return ok(al)
	}, 30*time.Second, 20*time.Millisecond, "allocation %s: last seen %+v", id, last)
	return last
}
