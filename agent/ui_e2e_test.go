//go:build linux

package agent

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/ui/uitest"
)

// logLoop is a raw_exec script that writes a numbered line five times a
// second.
const logLoop = `i=0; while true; do echo "line-$i"; i=$((i+1)); sleep 0.2; done`

// TestUIPagesShowAgentData opens every page of the web UI in headless
// Chromium against a real agent running a real raw_exec job: the actor
// tree shows the job's actors within a second of its registration, the
// job, allocation, client, server and CSI pages show the agent's data,
// and the allocation's log lines appear as the task writes them. Each
// page's screenshot is an artifact.
func TestUIPagesShowAgentData(t *testing.T) {
	a, c := rawExecAgent(t)
	base := "http://" + a.HTTPAddr()
	b := uitest.Start(t)

	// The actor tree, open before the job runs, follows it.
	b.Open(t, base+"/ui/actors")
	b.WaitReady(t, 20*time.Second)
	require.Zero(t, uitest.Eval[int](t, b, `document.querySelectorAll('li[data-kind=alloc]').length`), b.Text(t))
	_, _, err := c.Jobs().Register(rawExecJob("web", logLoop), nil)
	require.NoError(t, err)
	registered := time.Now()
	b.WaitFor(t, `document.querySelector('li[data-kind=alloc]')`, time.Second)
	t.Logf("the actor tree showed the new job's alloc actor %v after its registration returned", time.Since(registered).Round(time.Millisecond))
	b.Screenshot(t, "actors")

	stub := waitAllocStatus(t, c, "web", "running")
	node := a.Node().GetID()

	b.Open(t, base+"/ui/jobs")
	b.WaitFor(t, `document.querySelector('a[href="/ui/jobs/web@default"]')`, 10*time.Second)
	b.Screenshot(t, "jobs")

	b.Open(t, base+"/ui/jobs/web@default")
	b.WaitFor(t, fmt.Sprintf(`document.querySelector('[data-section=allocations] a[href="/ui/allocations/%s"]')`, stub.ID), 10*time.Second)
	b.WaitFor(t, `document.querySelector('[data-section=job]').innerText.includes('t (raw_exec)')`, 10*time.Second)
	b.WaitFor(t, `document.querySelector('[data-section=versions] tbody tr')`, 10*time.Second)
	// Its allocations came from one page of /v1/allocations (a filter by
	// job, newest first), which the agent answered.
	b.WaitFor(t, `performance.getEntriesByName('troupe:drawn /v1/allocations').length === 1`, 10*time.Second)
	b.Screenshot(t, "job")

	// The log grows on the page as the task writes it, without a reload.
	b.Open(t, base+"/ui/allocations/"+stub.ID)
	b.WaitFor(t, `document.querySelector('[data-logs]').textContent.includes('line-1\n')`, 10*time.Second)
	b.WaitFor(t, `document.querySelector('[data-section=alloc]').innerText.includes('running')`, 10*time.Second)
	last := lastLogLine(t, uitest.Eval[string](t, b, `document.querySelector('[data-logs]').textContent`))
	b.WaitFor(t, fmt.Sprintf(`document.querySelector('[data-logs]').textContent.includes('line-%d\n')`, last+3), 10*time.Second)
	b.Screenshot(t, "allocation")

	// The allocation links to its actors.
	b.Click(t, `a[href^="/ui/actors?alloc="]`)
	b.WaitFor(t, fmt.Sprintf(`document.querySelector('li[data-kind=alloc][data-path*=%q]')`, stub.ID), 10*time.Second)
	b.WaitFor(t, `document.querySelector('li[data-kind=task]')`, 10*time.Second)
	b.Screenshot(t, "allocation-actors")

	b.Open(t, base+"/ui/clients")
	b.WaitFor(t, fmt.Sprintf(`document.querySelector('a[href="/ui/clients/%s"]')`, node), 10*time.Second)
	b.Screenshot(t, "clients")

	b.Open(t, base+"/ui/clients/"+node)
	b.WaitFor(t, `document.querySelector('[data-section=node]').innerText.includes('raw_exec')`, 10*time.Second)
	b.WaitFor(t, fmt.Sprintf(`document.querySelector('[data-section=allocations] a[href="/ui/allocations/%s"]')`, stub.ID), 10*time.Second)
	b.WaitFor(t, `performance.getEntriesByName('troupe:drawn /v1/allocations').length === 1`, 10*time.Second)
	b.Screenshot(t, "client")

	b.Open(t, base+"/ui/servers")
	b.WaitFor(t, `document.querySelector('[data-leader]')?.textContent.includes(':')`, 10*time.Second)
	b.Screenshot(t, "servers")

	for _, p := range []string{"csi/volumes", "csi/plugins"} {
		b.Open(t, base+"/ui/"+p)
		b.WaitReady(t, 10*time.Second)
		require.NotContains(t, b.Text(t), "Error", p)
		b.Screenshot(t, regexp.MustCompile(`\W`).ReplaceAllString(p, "-"))
	}

	// The redirect from / lands on the jobs page.
	b.Open(t, base+"/")
	b.WaitFor(t, `location.pathname === '/ui/' && document.querySelector('a[href="/ui/jobs/web@default"]')`, 10*time.Second)
}

// lastLogLine is the number of the last whole line-N in text.
func lastLogLine(t *testing.T, text string) int {
	t.Helper()
	m := regexp.MustCompile(`line-(\d+)\n`).FindAllStringSubmatch(text, -1)
	require.NotEmpty(t, m, text)
	n, err := strconv.Atoi(m[len(m)-1][1])
	require.NoError(t, err)
	return n
}
