package main

import (
	"io"
	"strconv"
	"time"

	"github.com/troupe-dev/troupe/api"
)

// jobScaleCommand is `troupe job scale [-detach] JOB [GROUP] COUNT`: set
// a group's count (the group may be left out of a job with one group),
// then follow the evaluation as job run does. The allocations that keep
// running are not restarted.
func jobScaleCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("job scale", stdout, stderr, false)
	detach := m.fs.Bool("detach", false, "print the evaluation ID and exit without monitoring")
	timeout := m.fs.Duration("timeout", defaultMonitorTimeout, "give up monitoring after this long")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) != 2 && len(rest) != 3 {
		return m.usageError("JOB [GROUP] COUNT")
	}
	count, err := strconv.ParseInt(rest[len(rest)-1], 10, 64)
	if err != nil || count < 0 {
		return m.usageError("JOB [GROUP] COUNT (COUNT: 0 or more)")
	}
	group := ""
	if len(rest) == 3 {
		group = rest[1]
	}
	return changeJob(m, rest[0], "scaling job", "Job scale successful", *detach, *timeout,
		func(c *api.Client, jobID string) (*api.JobRegisterResponse, error) {
			resp, _, err := c.Jobs().Scale(jobID, group, count, nil)
			return resp, err
		})
}

// changeJob looks up the job named (or prefixed) id, makes change to it
// and follows the evaluation the change answers with, as job run does.
func changeJob(m *meta, id, what, done string, detach bool, timeout time.Duration,
	change func(c *api.Client, jobID string) (*api.JobRegisterResponse, error)) int {
	c, err := m.client()
	if err != nil {
		return m.fail("creating the API client", err)
	}
	job, err := lookupJob(c, id)
	if err != nil {
		return m.fail("looking up job", err)
	}
	resp, err := change(c, job.ID)
	if err != nil {
		return m.fail(what, err)
	}
	return followEval(m, c, resp.EvalID, detach, timeout, true, done)
}
