package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/messages"
)

// jobPeriodicForceCommand is `troupe job periodic force [-detach] JOB`:
// launch a child of a periodic job now and follow its evaluation.
func jobPeriodicForceCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("job periodic force", stdout, stderr, false)
	detach := m.fs.Bool("detach", false, "print the evaluation ID and exit without monitoring")
	timeout := m.fs.Duration("timeout", defaultMonitorTimeout, "give up monitoring after this long")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) != 1 {
		return m.usageError("JOB")
	}
	return changeJob(m, rest[0], "forcing a periodic launch", "Periodic launch successful", *detach, *timeout,
		func(c *api.Client, jobID string) (*api.JobRegisterResponse, error) {
			resp, _, err := c.Jobs().PeriodicForce(jobID, nil)
			if err != nil {
				return nil, err
			}
			return &api.JobRegisterResponse{EvalID: resp.EvalID, EvalCreateIndex: resp.EvalCreateIndex, Index: resp.Index}, nil
		})
}

// writePeriodic writes a periodic job's next launch and its children, as
// Nomad's job status does.
func writePeriodic(w io.Writer, c *api.Client, j *messages.Job, counts *api.JobChildrenSummary, now time.Time) error {
	p := j.GetPeriodic()
	next := "<none>"
	if p.GetEnabled() && !j.GetStop() {
		if t, err := jobspec.PeriodicNext(p, now); err == nil && !t.IsZero() {
			next = fmt.Sprintf("%s (%s from now)", t.UTC().Format(time.RFC3339), t.Sub(now).Round(time.Second))
		}
	}
	writeKV(w, []kv{{"Periodic", "true"}, {"Cron", strings.Join(jobspec.PeriodicSpecs(p), ", ")},
		{"Time Zone", p.GetTimeZone()}, {"Prohibit Overlap", fmt.Sprint(p.GetProhibitOverlap())},
		{"Next Periodic Launch", next}})
	children, err := childJobs(c, j)
	if err != nil {
		return err
	}
	if counts == nil { // the servers count the children (JobSummary.Children)
		counts = &api.JobChildrenSummary{}
	}
	fmt.Fprintln(w, "\nChildren Job Summary")
	writeTable(w, []string{"Pending", "Running", "Dead"}, [][]string{{fmt.Sprint(counts.Pending), fmt.Sprint(counts.Running), fmt.Sprint(counts.Dead)}})
	if len(children) == 0 {
		return nil
	}
	sort.Slice(children, func(a, b int) bool { return children[a].SubmitTime > children[b].SubmitTime })
	fmt.Fprintln(w, "\nPreviously Launched Jobs")
	rows := make([][]string, 0, len(children))
	for _, s := range children {
		rows = append(rows, []string{s.ID, time.Unix(0, s.SubmitTime).UTC().Format(time.RFC3339), s.Status})
	}
	writeTable(w, []string{"ID", "Launch Time", "Status"}, rows)
	return nil
}

// childJobs are the jobs whose parent is j (periodic launches, dispatches).
func childJobs(c *api.Client, j *messages.Job) ([]*api.JobListStub, error) {
	jobs, _, err := c.Jobs().List(nil)
	if err != nil {
		return nil, err
	}
	var children []*api.JobListStub
	for _, s := range jobs {
		if s.ParentID == j.ID && s.Namespace == j.Namespace {
			children = append(children, s)
		}
	}
	return children, nil
}
