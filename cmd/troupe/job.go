package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// defaultMonitorTimeout bounds how long run and stop watch the cluster.
const defaultMonitorTimeout = 5 * time.Minute

// jobRunCommand is `troupe job run [-detach] [-json-file] [-timeout D]
// [-check-index N] [-var NAME=VALUE]... [-var-file F] FILE`. The job is
// registered with its submission (the file's text, its format and the
// variables), which GET /v1/job/:id/submission gives back.
func jobRunCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("job run", stdout, stderr, false)
	detach := m.fs.Bool("detach", false, "print the evaluation ID and exit without monitoring")
	jsonFile := m.fs.Bool("json-file", false, "the file is a JSON job (default: by the .json extension)")
	timeout := m.fs.Duration("timeout", defaultMonitorTimeout, "give up monitoring after this long")
	checkIndex := m.fs.Int64("check-index", -1, "submit only if the registered job's modify index is this one (from job plan; 0: a new job)")
	vars := jobVarFlags(m)
	id, c, code, ok := m.parseOne(args, "FILE")
	if !ok {
		return code
	}
	job, sub, err := readJobFile(c, id, *jsonFile, vars)
	if err != nil {
		return m.fail("parsing job file from "+id, err)
	}
	jobNamespace(c, job)
	req := &api.JobRegisterRequest{Job: job, Submission: sub}
	if *checkIndex >= 0 {
		req.EnforceIndex, req.JobModifyIndex = true, uint64(*checkIndex)
	}
	resp, _, err := c.Jobs().RegisterRequest(req, nil)
	if err != nil {
		return m.fail("submitting job", err)
	}
	if resp.Warnings != "" {
		fmt.Fprintf(m.stdout, "Job Warnings:\n%s\n\n", resp.Warnings)
	}
	return followEval(m, c, resp.EvalID, *detach, *timeout, true, "Job registration successful")
}

// followEval prints the evaluation ID when detach, else monitors it.
func followEval(m *meta, c *api.Client, evalID string, detach bool, timeout time.Duration, waitAllocs bool, done string) int {
	if evalID == "" {
		fmt.Fprintln(m.stdout, done)
		return exitOK
	}
	if detach {
		fmt.Fprintln(m.stdout, done)
		fmt.Fprintf(m.stdout, "Evaluation ID: %s\n", evalID)
		return exitOK
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	code, err := newMonitor(c, m.stdout, waitAllocs).run(ctx, evalID)
	if err != nil {
		return m.fail("monitoring evaluation "+shortID(evalID), err)
	}
	return code
}

// readJobFile decodes a job file: JSON (a job, or {"Job": job}) when
// asJSON (-json-file) or the file ends in .json, else HCL parsed by the
// agent (POST /v1/jobs/parse) with vars. It answers the submission too:
// the file's text, "json" or "hcl2", and the variables given.
func readJobFile(c *api.Client, path string, asJSON bool, vars *jobVars) (*messages.Job, *messages.JobSubmission, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errBadJobFile, err)
	}
	if !asJSON && !strings.EqualFold(filepath.Ext(path), ".json") {
		return readHCLJob(c, src, vars)
	}
	if len(vars.flags) > 0 || vars.file != "" {
		return nil, nil, fmt.Errorf("%w: -var and -var-file apply to HCL job files, not JSON", errBadJobFile)
	}
	sub := &messages.JobSubmission{Source: string(src), Format: "json"}
	// Unknown fields are ignored, so Nomad's own job JSON is accepted.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(src, &top); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errBadJobFile, err)
	}
	if raw, ok := top["Job"]; ok && len(top) == 1 {
		src = raw
	}
	job := &messages.Job{}
	if err := json.Unmarshal(src, job); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errBadJobFile, err)
	}
	return job, sub, nil
}

// jobStopCommand is `troupe job stop [-purge] [-global] [-detach] ID`.
func jobStopCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("job stop", stdout, stderr, false)
	purge := m.fs.Bool("purge", false, "remove the job from the state, not just stop it")
	global := m.fs.Bool("global", false, "stop a multiregion job in all its regions")
	detach := m.fs.Bool("detach", false, "print the evaluation ID and exit without monitoring")
	timeout := m.fs.Duration("timeout", defaultMonitorTimeout, "give up monitoring after this long")
	id, c, code, ok := m.parseOne(args, "ID")
	if !ok {
		return code
	}
	job, err := lookupJob(c, id)
	if err != nil {
		return m.fail("looking up job", err)
	}
	resp, _, err := c.Jobs().DeregisterOpts(job.ID, api.DeregisterOptions{Purge: *purge, Global: *global}, nil)
	if err != nil {
		return m.fail("deregistering job", err)
	}
	return followEval(m, c, resp.EvalID, *detach, *timeout, false, "Job stop successful")
}

// jobInspectCommand is `troupe job inspect ID`: the job as {"Job": ...},
// which `troupe job run` accepts back.
func jobInspectCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("job inspect", stdout, stderr, false)
	id, c, code, ok := m.parseOne(args, "ID")
	if !ok {
		return code
	}
	job, err := lookupJob(c, id)
	if err != nil {
		return m.fail("inspecting job", err)
	}
	return m.printJSON(map[string]*messages.Job{"Job": job})
}
