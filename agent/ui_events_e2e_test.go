//go:build linux

package agent

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/ui/uitest"
)

// reads are the page's completed reads of API paths starting with
// prefix, as the browser's Performance API lists them (their query
// strings).
func reads(t *testing.T, b *uitest.Browser, prefix string) []string {
	t.Helper()
	return uitest.Eval[[]string](t, b, `performance.getEntriesByType('resource').map((e) => new URL(e.name))
  .filter((u) => u.pathname.startsWith(`+strconv.Quote(prefix)+`)).map((u) => u.search)`)
}

// noBlockingRead fails t when one of qs is a blocking query.
func noBlockingRead(t *testing.T, qs []string) {
	t.Helper()
	for _, q := range qs {
		require.NotContains(t, q, "index=", "a blocking query: %v", qs)
	}
}

// TestUIFollowsEventStream: the jobs page and a job's page, open before
// a job exists, show it once it is registered and its allocation once it
// is placed, without a reload: they follow the agent's event stream, so
// the page read /v1/jobs again after the Job event rather than waiting on
// a blocking query (no read of it carried ?index=).
func TestUIFollowsEventStream(t *testing.T) {
	a, c := rawExecAgent(t)
	base := "http://" + a.HTTPAddr()
	b := uitest.Start(t)

	b.Open(t, base+"/ui/jobs")
	b.WaitReady(t, 20*time.Second)
	require.Contains(t, b.Text(t), "No jobs.")
	_, _, err := c.Jobs().Register(rawExecJob("late", "sleep 100"), nil)
	require.NoError(t, err)
	registered := time.Now()
	b.WaitFor(t, `document.querySelector('a[href="/ui/jobs/late@default"]')`, 5*time.Second)
	t.Logf("the jobs page showed the new job %v after its registration returned", time.Since(registered).Round(time.Millisecond))
	jobs := reads(t, b, "/v1/jobs")
	require.GreaterOrEqual(t, len(jobs), 2, "read once, then again after the event: %v", jobs)
	noBlockingRead(t, jobs)
	b.Screenshot(t, "jobs-live")

	// A job's page, open before the job, shows it and its allocation.
	b.Open(t, base+"/ui/jobs/later@default")
	b.WaitReady(t, 20*time.Second)
	_, _, err = c.Jobs().Register(rawExecJob("later", "sleep 100"), nil)
	require.NoError(t, err)
	b.WaitFor(t, `document.querySelector('[data-section=job]').innerText.includes('t (raw_exec)')`, 5*time.Second)
	b.WaitFor(t, `document.querySelector('[data-section=allocations] a[href^="/ui/allocations/"]')`, 10*time.Second)
	b.WaitFor(t, `document.querySelector('[data-section=allocations]').innerText.includes('running')`, 20*time.Second)
	noBlockingRead(t, reads(t, b, "/v1/job/later"))
	b.Screenshot(t, "job-live")
}
