package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/jobdiff"
)

// jobHistoryCommand is `troupe job history [-p] [-json] JOB`: the job's
// stored versions, newest first; with -p each one's difference from the
// version before it.
func jobHistoryCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("job history", stdout, stderr, true)
	diffs := m.fs.Bool("p", false, "show each version's difference from the one before it")
	id, c, code, ok := m.parseOne(args, "JOB")
	if !ok {
		return code
	}
	job, err := lookupJob(c, id)
	if err != nil {
		return m.fail("looking up job", err)
	}
	resp, _, err := c.Jobs().Versions(job.ID, *diffs, nil)
	if err != nil {
		return m.fail("reading the job's versions", err)
	}
	if m.json {
		return m.printJSON(resp)
	}
	for i, v := range resp.Versions {
		if i > 0 {
			fmt.Fprintln(m.stdout)
		}
		writeKV(m.stdout, []kv{
			{"Version", strconv.FormatUint(v.GetVersion(), 10)},
			{"Stable", strconv.FormatBool(v.GetStable())},
			{"Submit Date", formatTime(v.GetSubmitTime())},
		})
		if i < len(resp.Diffs) && resp.Diffs[i].Type != jobdiff.TypeNone {
			fmt.Fprintln(m.stdout, "Diff:")
			fmt.Fprint(m.stdout, indent(jobdiff.Format(resp.Diffs[i], false), "  "))
		}
	}
	return exitOK
}

// jobRevertCommand is `troupe job revert [-detach] JOB VERSION`: register
// a stored version's spec again, as a new version, then follow the
// evaluation as job run does.
func jobRevertCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("job revert", stdout, stderr, false)
	detach := m.fs.Bool("detach", false, "print the evaluation ID and exit without monitoring")
	timeout := m.fs.Duration("timeout", defaultMonitorTimeout, "give up monitoring after this long")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) != 2 {
		return m.usageError("JOB VERSION")
	}
	version, err := strconv.ParseUint(rest[1], 10, 64)
	if err != nil {
		return m.usageError("JOB VERSION (VERSION: a number from job history)")
	}
	return changeJob(m, rest[0], "reverting job", "Job revert successful", *detach, *timeout,
		func(c *api.Client, jobID string) (*api.JobRegisterResponse, error) {
			resp, _, err := c.Jobs().Revert(jobID, version, nil, nil)
			return resp, err
		})
}

// indent prefixes every non-empty line of s.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}
