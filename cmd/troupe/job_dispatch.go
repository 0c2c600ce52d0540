package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/troupe-dev/troupe/actors/server/dispatch"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// jobDispatchCommand is `troupe job dispatch [-meta K=V]...
// [-id-prefix-template T] [-idempotency-token T] [-priority N] [-detach] JOB [INPUT]`:
// create a child of a parameterized job with a payload read from INPUT
// (a file, or "-" for stdin) and follow its evaluation, printing what
// Nomad's CLI prints.
func jobDispatchCommand(args []string, stdout, stderr io.Writer) int {
	return jobDispatch(args, os.Stdin, stdout, stderr)
}

func jobDispatch(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	m := newMeta("job dispatch", stdout, stderr, false)
	meta := varFlags{}
	m.fs.Var(meta, "meta", "a meta key of the dispatched job: KEY=VALUE (repeatable)")
	prefix := m.fs.String("id-prefix-template", "", "put this in the dispatched job's ID")
	token := m.fs.String("idempotency-token", "", "dispatch once per token: the same token answers the same job")
	priority := m.fs.Int("priority", 0, "the dispatched job's priority (1-100) instead of the parameterized job's")
	detach := m.fs.Bool("detach", false, "print the dispatched job and its evaluation and exit without monitoring")
	timeout := m.fs.Duration("timeout", defaultMonitorTimeout, "give up monitoring after this long")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) < 1 || len(rest) > 2 {
		return m.usageError("JOB [INPUT]")
	}
	var payload []byte
	if len(rest) == 2 {
		var err error
		if payload, err = readPayload(rest[1], stdin); err != nil {
			return m.fail("reading the payload", err)
		}
	}
	c, err := m.client()
	if err != nil {
		return m.fail("creating the API client", err)
	}
	resp, _, err := c.Jobs().DispatchRequest(&api.JobDispatchRequest{JobID: rest[0], Payload: payload, Meta: meta,
		IdPrefixTemplate: *prefix, Priority: *priority}, *token, nil)
	if err != nil {
		return m.fail("dispatching job", err)
	}
	out := []kv{{"Dispatched Job ID", resp.DispatchedJobID}}
	if resp.EvalID != "" {
		out = append(out, kv{"Evaluation ID", shortID(resp.EvalID)})
	}
	writeKV(m.stdout, out)
	if *detach || resp.EvalID == "" { // an earlier dispatch's job: nothing to follow
		return exitOK
	}
	fmt.Fprintln(m.stdout)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	code, err = newMonitor(c, m.stdout, true).run(ctx, resp.EvalID)
	if err != nil {
		return m.fail("monitoring evaluation "+shortID(resp.EvalID), err)
	}
	return code
}

// readPayload reads a dispatch's input: path, or stdin for "-", at most
// one byte over the servers' limit (so that they say it is too large).
func readPayload(path string, stdin io.Reader) ([]byte, error) {
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, dispatch.PayloadLimit+1))
	if err != nil {
		return nil, err
	}
	if len(data) > dispatch.PayloadLimit {
		return nil, fmt.Errorf("the payload is over the limit of %d bytes", dispatch.PayloadLimit)
	}
	return data, nil
}

// writeParameterized writes a parameterized job's block and its
// dispatched children, as Nomad's job status does.
func writeParameterized(w io.Writer, c *api.Client, j *messages.Job, counts *api.JobChildrenSummary) error {
	p := j.GetParameterizedJob()
	writeKV(w, []kv{{"Parameterized", "true"}})
	fmt.Fprintln(w, "\nParameterized Job")
	writeKV(w, []kv{{"Payload", p.GetPayload()}, {"Required Metadata", strings.Join(p.GetMetaRequired(), ", ")},
		{"Optional Metadata", strings.Join(p.GetMetaOptional(), ", ")}})
	children, err := childJobs(c, j)
	if err != nil {
		return err
	}
	if counts == nil {
		counts = &api.JobChildrenSummary{}
	}
	fmt.Fprintln(w, "\nParameterized Job Summary")
	writeTable(w, []string{"Pending", "Running", "Dead"}, [][]string{{fmt.Sprint(counts.Pending), fmt.Sprint(counts.Running), fmt.Sprint(counts.Dead)}})
	if len(children) == 0 {
		fmt.Fprintln(w, "\nNo dispatched instances of parameterized job found")
		return nil
	}
	sort.Slice(children, func(a, b int) bool { return children[a].SubmitTime > children[b].SubmitTime })
	fmt.Fprintln(w, "\nDispatched Jobs")
	rows := make([][]string, 0, len(children))
	for _, s := range children {
		rows = append(rows, []string{s.ID, s.Status})
	}
	writeTable(w, []string{"ID", "Status"}, rows)
	return nil
}
