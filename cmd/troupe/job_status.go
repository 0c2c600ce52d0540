package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// jobStatusCommand is `troupe job status [-json] [ID]`.
func jobStatusCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("job status", stdout, stderr, true)
	filter := filterFlag(m, "jobs")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) > 1 {
		return m.usageError("[ID]")
	}
	c, err := m.client()
	if err != nil {
		return m.fail("creating the API client", err)
	}
	if len(rest) == 0 {
		return jobList(m, c, *filter)
	}
	job, err := lookupJob(c, rest[0])
	if err != nil {
		return m.fail("querying job", err)
	}
	if m.json {
		return m.printJSON(job)
	}
	return jobDetail(m, c, job)
}

func jobList(m *meta, c *api.Client, filter string) int {
	jobs, _, err := c.Jobs().List(&api.QueryOptions{Filter: filter})
	if err != nil {
		return m.fail("querying jobs", err)
	}
	return printJobs(m, jobs)
}

// printJobs writes a job list (or its JSON).
func printJobs(m *meta, jobs []*api.JobListStub) int {
	if m.json {
		return m.printJSON(jobs)
	}
	if len(jobs) == 0 {
		fmt.Fprintln(m.stdout, "No running jobs")
		return exitOK
	}
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].ID < jobs[j].ID })
	rows := make([][]string, 0, len(jobs))
	for _, j := range jobs {
		rows = append(rows, []string{j.ID, j.Type, strconv.Itoa(j.Priority), j.Status, formatTime(j.SubmitTime)})
	}
	writeTable(m.stdout, []string{"ID", "Type", "Priority", "Status", "Submit Date"}, rows)
	return exitOK
}

func jobDetail(m *meta, c *api.Client, job *messages.Job) int {
	writeKV(m.stdout, []kv{
		{"ID", job.ID},
		{"Name", job.Name},
		{"Submit Date", formatTime(job.SubmitTime)},
		{"Type", job.Type},
		{"Priority", strconv.Itoa(int(job.Priority))},
		{"Datacenters", strings.Join(job.Datacenters, ",")},
		{"Namespace", job.Namespace},
		{"Status", job.Status},
	})
	summary, _, err := c.Jobs().Summary(job.ID, nil)
	if err != nil {
		return m.fail("querying job summary", err)
	}
	if job.GetPeriodic() != nil {
		fmt.Fprintln(m.stdout)
		if err := writePeriodic(m.stdout, c, job, summary.Children, time.Now()); err != nil {
			return m.fail("querying the periodic job's children", err)
		}
	}
	if job.IsParameterized() {
		fmt.Fprintln(m.stdout)
		if err := writeParameterized(m.stdout, c, job, summary.Children); err != nil {
			return m.fail("querying the parameterized job's children", err)
		}
	}
	if job.ParentID != "" {
		writeKV(m.stdout, []kv{{"Parent ID", job.ParentID}})
	}
	fmt.Fprintln(m.stdout, "\nSummary")
	writeSummary(m.stdout, summary)
	if code := writeLatestDeployment(m, c, job.ID); code != exitOK {
		return code
	}
	evals, _, err := c.Jobs().Evaluations(job.ID, nil)
	if err != nil {
		return m.fail("querying job evaluations", err)
	}
	writeBlockedFailures(m.stdout, evals)
	allocs, _, err := c.Jobs().Allocations(job.ID, nil)
	if err != nil {
		return m.fail("querying job allocations", err)
	}
	fmt.Fprintln(m.stdout, "\nAllocations")
	writeAllocTable(m.stdout, allocs, false)
	return exitOK
}

func writeSummary(w io.Writer, s *api.JobSummary) {
	rows := make([][]string, 0, len(s.Summary))
	for _, tg := range sortedKeys(s.Summary) {
		g := s.Summary[tg]
		rows = append(rows, []string{tg, strconv.Itoa(g.Queued), strconv.Itoa(g.Starting),
			strconv.Itoa(g.Running), strconv.Itoa(g.Failed), strconv.Itoa(g.Complete),
			strconv.Itoa(g.Lost), strconv.Itoa(g.Unknown)})
	}
	writeTable(w, []string{"Task Group", "Queued", "Starting", "Running", "Failed", "Complete", "Lost", "Unknown"}, rows)
}

// writeBlockedFailures writes, as Nomad's job status does, why the job
// waits for placements: the failures of its newest evaluation that has
// some, while one of its evaluations is blocked (a driver no node
// offers, resources no node has).
func writeBlockedFailures(w io.Writer, evals []*messages.Evaluation) {
	var latest *messages.Evaluation
	blocked := false
	for _, e := range evals {
		blocked = blocked || e.Status == messages.EvalStatusBlocked
		if len(e.FailedTGAllocs) > 0 && (latest == nil || e.CreateIndex > latest.CreateIndex) {
			latest = e
		}
	}
	if latest == nil || !blocked {
		return
	}
	fmt.Fprintln(w, "\nPlacement Failure")
	for _, tg := range sortedKeys(latest.FailedTGAllocs) {
		fmt.Fprintf(w, "Task Group %q:\n", tg)
		for _, line := range metricReasons(latest.FailedTGAllocs[tg]) {
			fmt.Fprintf(w, "  * %s\n", line)
		}
	}
}

// writeAllocTable writes allocations newest first.
func writeAllocTable(w io.Writer, allocs []*api.AllocListStub, verbose bool) {
	if len(allocs) == 0 {
		fmt.Fprintln(w, "No allocations placed")
		return
	}
	sorted := append([]*api.AllocListStub(nil), allocs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].CreateIndex > sorted[j].CreateIndex })
	rows := make([][]string, 0, len(sorted))
	for _, a := range sorted {
		rows = append(rows, []string{idOrShort(a.ID, verbose), idOrShort(a.NodeID, verbose), a.TaskGroup,
			strconv.FormatUint(a.JobVersion, 10), a.DesiredStatus, a.ClientStatus,
			timeAgo(a.CreateTime), timeAgo(a.ModifyTime)})
	}
	writeTable(w, []string{"ID", "Node ID", "Task Group", "Version", "Desired", "Status", "Created", "Modified"}, rows)
}
