//go:build linux

package agent

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/ui/uitest"
)

// logLoop is a raw_exec script that writes a numbered line five times a
// second.
const logLoop = `i=0; while true; do echo "line-$i"; i=$((i+1)); sleep 0.2; done`

// TestUIPagesShowAgentData opens every page of the web UI in headless
// Chromium against a real agent running a real raw_exec service job with
// an update block: the actor tree shows the job's actors within a second
// of its registration; the job page its groups, versions, deployment
// (followed to successful) and allocations; the allocation page its task
// events and its log lines as the task writes them; the client page its
// resources, and its drain once the node is drained through the API; the
// servers page the leader and raft peers; the CSI pages. Each page's
// screenshot is an artifact.
func TestUIPagesShowAgentData(t *testing.T) {
	a, c := rawExecAgent(t)
	base := "http://" + a.HTTPAddr()
	b := uitest.Start(t)

	// The actor tree, open before the job runs, follows it.
	b.Open(t, base+"/ui/actors")
	b.WaitReady(t, 20*time.Second)
	require.Zero(t, uitest.Eval[int](t, b, `document.querySelectorAll('li[data-kind=alloc]').length`), b.Text(t))
	web := rawExecJob("web", logLoop)
	web.Update = &nomad.UpdateStrategy{MaxParallel: ptr(1), HealthCheck: ptr("task_states"),
		MinHealthyTime: ptr(500 * time.Millisecond), HealthyDeadline: ptr(20 * time.Second), ProgressDeadline: ptr(time.Minute)}
	_, _, err := c.Jobs().Register(web, nil)
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
	// The job's deployment, followed from its events until it succeeds.
	dep := waitDeployment(t, c, "web", 0, "successful", 30*time.Second)
	b.WaitFor(t, fmt.Sprintf(`(t => t.includes(%q) && t.includes('successful') && t.includes('g: 1/1 healthy'))(document.querySelector('[data-section=deployments]').innerText)`,
		dep.ID[:8]), 10*time.Second)
	b.Screenshot(t, "job")

	// The log grows on the page as the task writes it, without a reload.
	b.Open(t, base+"/ui/allocations/"+stub.ID)
	b.WaitFor(t, `document.querySelector('[data-logs]').textContent.includes('line-1\n')`, 10*time.Second)
	b.WaitFor(t, `document.querySelector('[data-section=alloc]').innerText.includes('running')`, 10*time.Second)
	// The task's events, newest first: the client received it, then it started.
	b.WaitFor(t, `(t => t.includes('Events of t') && t.indexOf('Started') >= 0 && t.indexOf('Started') < t.indexOf('Received'))(document.querySelector('[data-section=alloc]').innerText)`, 10*time.Second)
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
	clientPageFollowsNode(t, b, c, node)

	b.Open(t, base+"/ui/servers")
	b.WaitFor(t, `document.querySelector('[data-leader]')?.textContent.includes(':')`, 10*time.Second)
	raft, err := c.Operator().RaftGetConfiguration(nil)
	require.NoError(t, err)
	require.NotEmpty(t, raft.Servers)
	for _, p := range raft.Servers {
		b.WaitFor(t, fmt.Sprintf(`[...document.querySelectorAll('[data-section=servers] [data-peers] tbody tr')].some((tr) => tr.innerText.includes(%q) && tr.innerText.includes(%q))`,
			p.ID, p.Address), 10*time.Second)
	}
	b.WaitFor(t, `[...document.querySelectorAll('[data-section=servers] [data-peers] tbody tr')].filter((tr) => tr.cells[3].textContent === 'yes').length === 1`, 10*time.Second)
	// It follows them with blocking reads (bounded: members and peers
	// change without the store).
	b.WaitFor(t, `performance.getEntriesByType('resource').some((e) => e.name.includes('/v1/operator/raft/configuration?') && e.name.includes('index='))`, 10*time.Second)
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

// clientPageFollowsNode checks the client page, open at node: its
// resources are the node's, and a drain started through the API shows
// on it without a reload.
func clientPageFollowsNode(t *testing.T, b *uitest.Browser, c *nomad.Client, node string) {
	t.Helper()
	n, _, err := c.Nodes().Info(node, nil)
	require.NoError(t, err)
	r := n.NodeResources
	require.Positive(t, r.Cpu.CpuShares)
	require.Positive(t, r.Memory.MemoryMB)
	b.WaitFor(t, fmt.Sprintf(`[...document.querySelectorAll('[data-section=node] [data-resources] tbody td')].map((td) => td.textContent).join(' ') === %q`,
		fmt.Sprintf("%d %d %d %d", r.Cpu.CpuShares, r.Cpu.TotalCpuCores, r.Memory.MemoryMB, r.Disk.DiskMB)), 10*time.Second)
	b.WaitFor(t, `document.querySelector('[data-section=node] [data-drain]').textContent === 'not draining'`, 10*time.Second)
	b.Screenshot(t, "client")

	_, err = c.Nodes().UpdateDrain(node, &nomad.DrainSpec{Deadline: time.Hour}, false, nil)
	require.NoError(t, err)
	b.WaitFor(t, `document.querySelector('[data-section=node] [data-drain]').textContent.startsWith('draining, deadline 1h0m0s')`, 10*time.Second)
	b.WaitFor(t, `document.querySelector('[data-section=node]').innerText.includes('ineligible')`, 10*time.Second)
	b.Screenshot(t, "client-draining")
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
