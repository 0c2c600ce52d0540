package agent

import (
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// periodicChildren are the job's children as Nomad's client lists them.
// It never fails the test itself: testify runs Eventually's and Never's
// conditions in goroutines that can outlive the test (and the agent), so
// a list that fails counts as none, and a child with a wrong ID as an
// extra one, which the callers' conditions reject.
func periodicChildren(c *nomad.Client, parent string) []*nomad.JobListStub {
	jobs, _, err := c.Jobs().List(nil)
	if err != nil {
		return nil
	}
	var out []*nomad.JobListStub
	for _, j := range jobs {
		if j.ParentID == parent {
			out = append(out, j)
		}
	}
	return out
}

// requireChildIDs: every child is named <parent>/periodic-<time>.
func requireChildIDs(t *testing.T, children []*nomad.JobListStub, parent string) {
	t.Helper()
	for _, ch := range children {
		require.True(t, strings.HasPrefix(ch.ID, parent+"/periodic-"), ch.ID)
	}
}

// TestPeriodicJobThroughNomadClient: a periodic batch job registered with
// Nomad's client launches children on its cron (every two seconds here:
// cronexpr takes a seconds field), each runs a real task to completion;
// force launches one more at once; stopping the parent stops launches.
func TestPeriodicJobThroughNomadClient(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	job := nomad.NewBatchJob("tick", "tick", "global", 50)
	job.Periodic = &nomad.PeriodicConfig{Specs: []string{"*/2 * * * * * *"}, ProhibitOverlap: ptr(true)}
	tg := nomad.NewTaskGroup("g", 1)
	task := nomad.NewTask("t", "exec").SetConfig("command", "/bin/true").
		Require(&nomad.Resources{CPU: ptr(20), MemoryMB: ptr(16)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	resp, _, err := c.Jobs().Register(job, nil)
	require.NoError(t, err)
	require.Empty(t, resp.EvalID, "a periodic job is not evaluated itself")

	got, _, err := c.Jobs().Info("tick", nil)
	require.NoError(t, err)
	require.True(t, got.IsPeriodic())
	require.Equal(t, "running", *got.Status)

	require.Eventually(t, func() bool {
		dead := 0
		for _, ch := range periodicChildren(c, "tick") {
			if ch.Status == "dead" && ch.JobSummary.Summary["g"].Complete == 1 {
				dead++
			}
		}
		return dead >= 2
	}, 30*time.Second, 50*time.Millisecond, "two launches ran their task to completion")

	children := periodicChildren(c, "tick")
	requireChildIDs(t, children, "tick")
	before := len(children)
	evalID, _, err := c.Jobs().PeriodicForce("tick", nil)
	require.NoError(t, err)
	require.NotEmpty(t, evalID)
	ev, _, err := c.Evaluations().Info(evalID, nil)
	require.NoError(t, err)
	require.Equal(t, "periodic-job", ev.TriggeredBy)
	require.True(t, strings.HasPrefix(ev.JobID, "tick/periodic-"), ev.JobID)

	sum, _, err := c.Jobs().Summary("tick", nil)
	require.NoError(t, err)
	require.NotNil(t, sum.Children)
	require.GreaterOrEqual(t, sum.Children.Pending+sum.Children.Running+sum.Children.Dead, int64(before+1))

	_, _, err = c.Jobs().PeriodicForce("no-such-job", nil)
	require.ErrorContains(t, err, "404")
	plain := nomad.NewBatchJob("plain", "plain", "global", 50)
	plain.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(nomad.NewTask("t", "exec").SetConfig("command", "/bin/true")))
	_, _, err = c.Jobs().Register(plain, nil)
	require.NoError(t, err)
	_, _, err = c.Jobs().PeriodicForce("plain", nil)
	require.ErrorContains(t, err, "400")
	require.ErrorContains(t, err, "not periodic")

	_, _, err = c.Jobs().Deregister("tick", false, nil)
	require.NoError(t, err)
	children = periodicChildren(c, "tick")
	requireChildIDs(t, children, "tick")
	stopped := len(children)
	require.Never(t, func() bool { return len(periodicChildren(c, "tick")) > stopped+1 }, 4*time.Second, 100*time.Millisecond,
		"a stopped periodic job launches nothing (one launch may have been in flight)")
}
