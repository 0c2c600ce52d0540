package main

import (
	"fmt"
	"io"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/jobdiff"
)

// Exit codes of `job plan`, as Nomad's: nothing would change, allocations
// would be created or destroyed, or the plan failed.
const (
	exitPlanNoChange = 0
	exitPlanChanges  = 1
	exitPlanError    = 255
)

// jobPlanCommand is `troupe job plan [-diff=false] [-verbose] FILE`: what
// registering the job would do, from a dry run of the scheduler, without
// changing anything.
func jobPlanCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("job plan", stdout, stderr, true)
	diff := m.fs.Bool("diff", true, "show the difference to the registered job")
	verbose := m.fs.Bool("verbose", false, "show the full plan")
	jsonFile := m.fs.Bool("json-file", false, "the file is a JSON job (default: by the .json extension)")
	vars := jobVarFlags(m)
	path, c, code, ok := m.parseOne(args, "FILE")
	if !ok {
		if code == exitOK { // -h
			return exitOK
		}
		return exitPlanError
	}
	job, _, err := readJobFile(c, path, *jsonFile, vars)
	if err != nil {
		m.fail("parsing job file from "+path, err)
		return exitPlanError
	}
	jobNamespace(c, job)
	resp, _, err := c.Jobs().Plan(job, *diff, nil)
	if err != nil {
		m.fail("during plan", err)
		return exitPlanError
	}
	if m.json {
		if m.printJSON(resp) != exitOK {
			return exitPlanError
		}
		return planExitCode(resp)
	}
	if *diff && resp.Diff != nil {
		fmt.Fprintln(m.stdout, jobdiff.Format(resp.Diff, *verbose))
	}
	fmt.Fprintln(m.stdout, "Scheduler dry-run:")
	if len(resp.FailedTGAllocs) == 0 {
		fmt.Fprintln(m.stdout, "- All tasks successfully allocated.")
	} else {
		fmt.Fprintln(m.stdout, "- WARNING: Failed to place all allocations.")
		writePlacementFailures(m.stdout, resp.FailedTGAllocs, "  ")
	}
	writePlanNotes(m.stdout, resp)
	if *verbose && resp.Annotations != nil {
		writePlanUpdates(m.stdout, resp.Annotations.DesiredTGUpdates)
	}
	fmt.Fprintf(m.stdout, "\nJob Modify Index: %d\n", resp.JobModifyIndex)
	fmt.Fprintln(m.stdout, "To submit the job with version verification run:")
	fmt.Fprintf(m.stdout, "\ntroupe job run -check-index %d %s\n\n", resp.JobModifyIndex, path)
	fmt.Fprintln(m.stdout, "When running the job with the check-index flag, the job will only be run if the")
	fmt.Fprintln(m.stdout, "job modify index given matches the server-side version. If the index has")
	fmt.Fprintln(m.stdout, "changed, another user has modified the job and the plan's results are")
	fmt.Fprintln(m.stdout, "potentially invalid.")
	return planExitCode(resp)
}

// planExitCode is exitPlanChanges when the plan creates or destroys
// allocations.
func planExitCode(resp *api.JobPlanResponse) int {
	for _, u := range resp.Annotations.GetDesiredTGUpdates() {
		if u.Place+u.Stop+u.Migrate+u.DestructiveUpdate+u.Canary > 0 {
			return exitPlanChanges
		}
	}
	return exitPlanNoChange
}

// writePlanUpdates writes each group's counts.
func writePlanUpdates(w io.Writer, updates map[string]*api.DesiredUpdates) {
	rows := make([][]string, 0, len(updates))
	for _, name := range sortedKeys(updates) {
		u := updates[name]
		rows = append(rows, []string{name, fmt.Sprint(u.Place), fmt.Sprint(u.Stop), fmt.Sprint(u.DestructiveUpdate),
			fmt.Sprint(u.InPlaceUpdate), fmt.Sprint(u.Migrate), fmt.Sprint(u.Ignore)})
	}
	fmt.Fprintln(w, "\nTask Group Updates")
	writeTable(w, []string{"Task Group", "Create", "Destroy", "Create/Destroy Update", "In-Place Update", "Migrate", "Ignore"}, rows)
}
