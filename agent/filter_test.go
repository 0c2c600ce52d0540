package agent

import (
	"sort"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// filterJob is a job of count allocations running cmd under /bin/sh.
func filterJob(id, typ string, count int, cmd string, meta map[string]string) *nomad.Job {
	job := nomad.NewServiceJob(id, id, "global", 50)
	job.Type = ptr(typ)
	job.Meta = meta
	task := nomad.NewTask("t", "exec").SetConfig("command", "/bin/sh").SetConfig("args", []string{"-c", cmd}).
		Require(&nomad.Resources{CPU: ptr(50), MemoryMB: ptr(32)})
	task.KillTimeout = ptr(time.Second)
	job.AddTaskGroup(nomad.NewTaskGroup("g", count).AddTask(task))
	return job
}

func allocJobs(allocs []*nomad.AllocationListStub) []string {
	out := []string{}
	for _, a := range allocs {
		out = append(out, a.JobID)
	}
	sort.Strings(out)
	return out
}

// TestFilterAndPagingThroughNomadClient runs real allocations of three
// jobs and lists them with Nomad's client, filtered (as Terraform's
// provider asks for one job's allocations) and paged.
func TestFilterAndPagingThroughNomadClient(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	for _, job := range []*nomad.Job{
		filterJob("alpha", "batch", 2, "exit 0", map[string]string{"team": "data"}),
		filterJob("beta", "batch", 1, "exit 0", nil),
		filterJob("svc", "service", 1, "while true; do sleep 0.2; done", map[string]string{"team": "web"}),
	} {
		_, _, err := c.Jobs().Register(job, nil)
		require.NoError(t, err)
	}
	waitAllocStatus(t, c, "svc", "running")
	require.Eventually(t, func() bool {
		done, _, err := c.Allocations().List(&nomad.QueryOptions{Filter: `ClientStatus == "complete"`})
		require.NoError(t, err)
		return len(done) == 3
	}, 30*time.Second, 50*time.Millisecond, "the batch allocations complete")

	for filter, want := range map[string][]string{
		`JobID == "alpha"`:                                        {"alpha", "alpha"},
		`JobID == "beta"`:                                         {"beta"},
		`ClientStatus == "running"`:                               {"svc"},
		`JobID != "svc" and TaskGroup == "g"`:                     {"alpha", "alpha", "beta"},
		`JobID == "nothing"`:                                      {},
		`TaskStates.t.State == "dead"`:                            {"alpha", "alpha", "beta"},
		`NodeID == "` + a.Node().GetID() + `"`:                    {"alpha", "alpha", "beta", "svc"},
		`(JobID == "beta" or JobID == "svc") and JobVersion == 0`: {"beta", "svc"},
	} {
		allocs, _, err := c.Allocations().List(&nomad.QueryOptions{Filter: filter})
		require.NoError(t, err, filter)
		require.Equal(t, want, allocJobs(allocs), filter)
	}
	onNode, _, err := c.Nodes().Allocations(a.Node().GetID(), &nomad.QueryOptions{Filter: `JobID == "svc"`})
	require.NoError(t, err)
	require.Len(t, onNode, 1)
	require.Equal(t, "svc", onNode[0].JobID)
	ofJob, _, err := c.Jobs().Allocations("alpha", false, &nomad.QueryOptions{Filter: `ClientStatus == "complete"`})
	require.NoError(t, err)
	require.Len(t, ofJob, 2)

	jobIDs := func(q *nomad.QueryOptions) []string {
		jobs, _, err := c.Jobs().List(q)
		require.NoError(t, err, q.Filter)
		out := []string{}
		for _, j := range jobs {
			out = append(out, j.ID)
		}
		return out
	}
	require.Eventually(t, func() bool {
		return len(jobIDs(&nomad.QueryOptions{Filter: `Status == "dead"`})) == 2
	}, 10*time.Second, 50*time.Millisecond, "the batch jobs are dead once their allocations complete")
	require.Equal(t, []string{"alpha", "beta"}, jobIDs(&nomad.QueryOptions{Filter: `Status == "dead"`}))
	require.Equal(t, []string{"svc"}, jobIDs(&nomad.QueryOptions{Filter: `Status != "dead"`}))
	require.Equal(t, []string{"svc"}, jobIDs(&nomad.QueryOptions{Filter: `Meta.team == "web"`}))
	require.Equal(t, []string{"alpha", "beta"}, jobIDs(&nomad.QueryOptions{Filter: `Meta.team != "web"`}))

	// A bad expression is a 400 that says so, and changes nothing.
	for _, bad := range []string{`JobID ==`, `JobID = "x"`, `Colour == "red"`} {
		_, _, err = c.Allocations().List(&nomad.QueryOptions{Filter: bad})
		require.ErrorContains(t, err, "400", bad)
		require.ErrorContains(t, err, "failed to read filter expression", bad)
	}
	_, _, err = c.Jobs().List(&nomad.QueryOptions{Filter: `Type ==`})
	require.ErrorContains(t, err, "failed to read filter expression")
	require.Len(t, jobIDs(&nomad.QueryOptions{}), 3)

	// Paging through the allocations in pages of k, with and without a
	// filter: every allocation exactly once, the header ending the walk.
	all, _, err := c.Allocations().List(nil)
	require.NoError(t, err)
	require.Len(t, all, 4)
	for _, tt := range []struct {
		filter string
		k      int32
		want   int
	}{{"", 1, 4}, {"", 3, 4}, {"", 4, 4}, {`JobID != "svc"`, 2, 3}, {`JobID == "alpha"`, 1, 2}} {
		seen := map[string]int{}
		q := &nomad.QueryOptions{Filter: tt.filter, PerPage: tt.k}
		for pages := 1; ; pages++ {
			require.LessOrEqual(t, pages, 5, "the walk does not end")
			page, meta, err := c.Allocations().List(q)
			require.NoError(t, err)
			require.LessOrEqual(t, len(page), int(tt.k))
			for _, al := range page {
				seen[al.ID]++
			}
			if meta.NextToken == "" {
				break
			}
			q.NextToken = meta.NextToken
		}
		require.Len(t, seen, tt.want, "filter %q per_page %d", tt.filter, tt.k)
		for id, n := range seen {
			require.Equal(t, 1, n, "allocation %s listed %d times", id, n)
		}
	}
	_, _, err = c.Allocations().List(&nomad.QueryOptions{Params: map[string]string{"per_page": "lots"}})
	require.ErrorContains(t, err, `invalid per_page "lots"`)
}
