package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// deploymentCommands is `troupe deployment ...`, as Nomad's.
func deploymentCommands() *cmdNode {
	return &cmdNode{synopsis: "Inspect and steer deployments", subs: map[string]*cmdNode{
		"list":    {synopsis: "List deployments", run: deploymentListCommand},
		"status":  {synopsis: "Show a deployment", run: deploymentStatusCommand},
		"promote": {synopsis: "Promote a deployment's canaries", run: deploymentPromoteCommand},
		"fail":    {synopsis: "Mark a deployment failed (rolling back with auto_revert)", run: deploymentActionCommand("fail")},
		"pause":   {synopsis: "Pause a deployment", run: deploymentActionCommand("pause")},
		"resume":  {synopsis: "Resume a paused deployment", run: deploymentActionCommand("resume")},
		"unblock": {synopsis: "Unblock a blocked (multiregion) deployment", run: deploymentActionCommand("unblock")},
	}}
}

func deploymentListCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("deployment list", stdout, stderr, true)
	c, code, ok := m.parseNone(args)
	if !ok {
		return code
	}
	ds, _, err := c.Deployments().List(nil)
	if err != nil {
		return m.fail("listing deployments", err)
	}
	if m.json {
		return m.printJSON(ds)
	}
	if len(ds) == 0 {
		fmt.Fprintln(m.stdout, "No deployments found")
		return exitOK
	}
	var rows [][]string
	for _, d := range ds {
		rows = append(rows, []string{shortID(d.ID), d.JobID, strconv.FormatUint(d.JobVersion, 10), d.Status, d.StatusDescription})
	}
	writeTable(m.stdout, []string{"ID", "Job ID", "Job Version", "Status", "Description"}, rows)
	return exitOK
}

func deploymentStatusCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("deployment status", stdout, stderr, true)
	id, c, code, ok := m.parseOne(args, "ID")
	if !ok {
		return code
	}
	d, _, err := c.Deployments().Info(id, nil)
	if err != nil {
		return m.fail("querying deployment", err)
	}
	if m.json {
		return m.printJSON(d)
	}
	writeDeployment(m.stdout, d)
	return exitOK
}

// writeDeployment prints a deployment as Nomad's `deployment status`.
func writeDeployment(w io.Writer, d *messages.Deployment) {
	writeKV(w, []kv{{"ID", shortID(d.ID)}, {"Job ID", d.JobID},
		{"Job Version", strconv.FormatUint(d.JobVersion, 10)}, {"Status", d.Status},
		{"Description", d.StatusDescription}})
	fmt.Fprintln(w, "\nDeployed")
	writeDeploymentGroups(w, "", d)
}

// writeDeploymentGroups is the per-group table of a deployment.
func writeDeploymentGroups(w io.Writer, indent string, d *messages.Deployment) {
	canaries := false
	for _, s := range d.TaskGroups {
		canaries = canaries || s.DesiredCanaries > 0
	}
	header := []string{"Task Group", "Auto Revert"}
	if canaries {
		header = append(header, "Promoted")
	}
	header = append(header, "Desired")
	if canaries {
		header = append(header, "Canaries")
	}
	header = append(header, "Placed", "Healthy", "Unhealthy", "Progress Deadline")
	names := make([]string, 0, len(d.TaskGroups))
	for name := range d.TaskGroups {
		names = append(names, name)
	}
	slices.Sort(names)
	var rows [][]string
	for _, name := range names {
		s := d.TaskGroups[name]
		row := []string{name, strconv.FormatBool(s.AutoRevert)}
		if canaries {
			row = append(row, strconv.FormatBool(s.Promoted))
		}
		row = append(row, strconv.Itoa(int(s.DesiredTotal)))
		if canaries {
			row = append(row, strconv.Itoa(int(s.DesiredCanaries)))
		}
		row = append(row, strconv.Itoa(int(s.PlacedAllocs)), strconv.Itoa(int(s.HealthyAllocs)),
			strconv.Itoa(int(s.UnhealthyAllocs)), formatTime(s.RequireProgressBy))
		rows = append(rows, row)
	}
	writeIndentedTable(w, indent, header, rows)
}

func deploymentPromoteCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("deployment promote", stdout, stderr, false)
	var groups stringList
	m.fs.Var(&groups, "group", "promote only this task group's canaries (repeatable)")
	id, c, code, ok := m.parseOne(args, "ID")
	if !ok {
		return code
	}
	return promote(m, c, id, groups)
}

func promote(m *meta, c *api.Client, id string, groups []string) int {
	resp, err := c.Deployments().Promote(id, groups)
	if err != nil {
		return m.fail("promoting deployment", err)
	}
	fmt.Fprintf(m.stdout, "Deployment %q promoted; evaluation %q\n", shortID(id), shortID(resp.EvalID))
	return exitOK
}

func deploymentActionCommand(action string) func([]string, io.Writer, io.Writer) int {
	return func(args []string, stdout, stderr io.Writer) int {
		m := newMeta("deployment "+action, stdout, stderr, false)
		id, c, code, ok := m.parseOne(args, "ID")
		if !ok {
			return code
		}
		d := c.Deployments()
		var resp *api.DeploymentUpdateResponse
		var err error
		switch action {
		case "fail":
			resp, err = d.Fail(id)
		case "pause":
			resp, err = d.Pause(id, true)
		case "resume":
			resp, err = d.Pause(id, false)
		default:
			resp, err = d.Unblock(id)
		}
		if err != nil {
			return m.fail(action+" deployment", err)
		}
		past := map[string]string{"fail": "failed", "pause": "paused", "resume": "resumed", "unblock": "unblocked"}[action]
		fmt.Fprintf(m.stdout, "Deployment %q %s\n", shortID(id), past)
		if resp.RevertedJobVersion != nil {
			fmt.Fprintf(m.stdout, "Job rolled back to version %d\n", *resp.RevertedJobVersion)
		}
		return exitOK
	}
}

// jobPromoteCommand is `troupe job promote JOB`: promote the job's latest
// deployment, as Nomad's.
func jobPromoteCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("job promote", stdout, stderr, false)
	var groups stringList
	m.fs.Var(&groups, "group", "promote only this task group's canaries (repeatable)")
	job, c, code, ok := m.parseOne(args, "JOB")
	if !ok {
		return code
	}
	d, _, err := c.Deployments().ForJob(job, nil)
	if err != nil {
		return m.fail("querying the job's deployment", err)
	}
	if d == nil {
		return m.fail("promoting", fmt.Errorf("job %q has no deployment", job))
	}
	return promote(m, c, d.ID, groups)
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// writeLatestDeployment is `job status`'s "Latest Deployment" section, as
// Nomad's (nothing when the job has none).
func writeLatestDeployment(m *meta, c *api.Client, job string) int {
	d, _, err := c.Deployments().ForJob(job, nil)
	switch {
	case api.IsNotFound(err):
		return exitOK
	case err != nil:
		return m.fail("querying the job's deployment", err)
	case d == nil:
		return exitOK
	}
	fmt.Fprintln(m.stdout, "\nLatest Deployment")
	writeKV(m.stdout, []kv{{"ID", shortID(d.ID)}, {"Status", d.Status}, {"Description", d.StatusDescription}})
	fmt.Fprintln(m.stdout, "\nDeployed")
	writeDeploymentGroups(m.stdout, "", d)
	return exitOK
}
