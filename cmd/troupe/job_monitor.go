package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// Exit codes of a monitor, as Nomad's.
const (
	exitOK      = 0
	exitError   = 1
	exitPlacing = 2 // placement failures or a failed allocation
)

// monitor follows an evaluation the way `nomad job run` does, then, when
// waitAllocs, follows the allocations it created until they run.
type monitor struct {
	c          *api.Client
	out        io.Writer
	waitAllocs bool
	// waitTime is the wait of each blocking query.
	waitTime time.Duration
	// pollFloor is the pause before asking again when a query returned
	// without the index moving (a server that does not block).
	pollFloor time.Duration
}

// monitorDefaults are the production settings; tests shrink them.
var monitorDefaults = monitor{waitTime: 30 * time.Second, pollFloor: 250 * time.Millisecond}

func newMonitor(c *api.Client, out io.Writer, waitAllocs bool) *monitor {
	m := monitorDefaults
	m.c, m.out, m.waitAllocs = c, out, waitAllocs
	return &m
}

// run monitors evalID until done or ctx ends; it returns the exit code
// and, for exit code 1, the error.
func (m *monitor) run(ctx context.Context, evalID string) (int, error) {
	m.headline("Monitoring evaluation %q", shortID(evalID))
	eval, err := m.waitEval(ctx, evalID)
	if err != nil {
		return exitError, err
	}
	allocs, index, err := m.evalAllocs(ctx, eval, 0)
	if err != nil {
		return exitError, err
	}
	for _, a := range allocs {
		verb := "created"
		if updatedInPlace(a, eval) {
			verb = "modified"
		}
		fmt.Fprintf(m.out, "    Allocation %q %s: node %q, group %q\n", shortID(a.ID), verb, shortID(a.NodeID), a.TaskGroup)
	}
	if eval.Status != messages.EvalStatusPending {
		fmt.Fprintf(m.out, "    Evaluation status changed: %q -> %q\n", messages.EvalStatusPending, eval.Status)
	}
	if code, done := m.evalOutcome(eval); done {
		return code, nil
	}
	if m.waitAllocs && eval.DeploymentID != "" {
		return m.followDeployment(ctx, eval.DeploymentID)
	}
	if !m.waitAllocs || len(allocs) == 0 {
		return exitOK, nil
	}
	return m.followAllocs(ctx, eval, allocs, index)
}

// updatedInPlace reports an allocation that an earlier evaluation made and
// eval updated where it runs.
func updatedInPlace(a *api.AllocListStub, eval *messages.Evaluation) bool {
	return a.CreateIndex < eval.CreateIndex
}

// headline prints a "==> time: ..." line.
func (m *monitor) headline(format string, args ...any) {
	fmt.Fprintf(m.out, "==> %s: %s\n", nowFunc().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
}

// evalOutcome prints how the evaluation finished; done says the monitor
// stops here with code.
func (m *monitor) evalOutcome(eval *messages.Evaluation) (code int, done bool) {
	if len(eval.FailedTGAllocs) > 0 {
		m.headline("Evaluation %q finished with status %q but failed to place all allocations:", shortID(eval.ID), eval.Status)
		writePlacementFailures(m.out, eval.FailedTGAllocs, "    ")
		if eval.BlockedEval != "" {
			fmt.Fprintf(m.out, "    Evaluation %q waiting for additional capacity to place remainder\n", shortID(eval.BlockedEval))
		}
		return exitPlacing, true
	}
	m.headline("Evaluation %q finished with status %q", shortID(eval.ID), eval.Status)
	if eval.Status == messages.EvalStatusFailed {
		fmt.Fprintf(m.out, "    Status description: %s\n", orNone(eval.StatusDescription))
		return exitPlacing, true
	}
	return exitOK, false
}

// waitEval blocks until the evaluation is complete, failed or canceled.
func (m *monitor) waitEval(ctx context.Context, id string) (*messages.Evaluation, error) {
	var index uint64
	announced := false
	for {
		eval, qm, err := m.c.Evaluations().Info(id, m.query(ctx, index))
		if err != nil {
			return nil, m.wrapCtx(ctx, "evaluation", err)
		}
		if !announced {
			announced = true
			m.announce(eval)
		}
		if evalTerminal(eval.Status) {
			return eval, nil
		}
		if index, err = m.next(ctx, index, qm.LastIndex); err != nil {
			return nil, m.wrapCtx(ctx, "evaluation", err)
		}
	}
}

func (m *monitor) announce(eval *messages.Evaluation) {
	switch {
	case eval.JobID != "":
		fmt.Fprintf(m.out, "    Evaluation triggered by job %q\n", eval.JobID)
	case eval.NodeID != "":
		fmt.Fprintf(m.out, "    Evaluation triggered by node %q\n", shortID(eval.NodeID))
	}
}

// evalTerminal is messages.EvalTerminalStatus, and it also takes the
// spelling "cancelled" (Nomad writes "canceled"), as this command always did.
func evalTerminal(status string) bool {
	return messages.EvalTerminalStatus(status) || status == "cancelled"
}

// evalAllocs lists the allocations the evaluation placed (desired run).
func (m *monitor) evalAllocs(ctx context.Context, eval *messages.Evaluation, index uint64) ([]*api.AllocListStub, uint64, error) {
	stubs, qm, err := m.c.Jobs().Allocations(eval.JobID, m.query(ctx, index))
	if err != nil {
		return nil, 0, m.wrapCtx(ctx, "allocations", err)
	}
	var out []*api.AllocListStub
	for _, a := range stubs {
		if a.EvalID == eval.ID && a.DesiredStatus == messages.AllocDesiredStatusRun {
			out = append(out, a)
		}
	}
	return out, qm.LastIndex, nil
}

// query builds the options of a blocking query after index.
func (m *monitor) query(ctx context.Context, index uint64) *api.QueryOptions {
	q := &api.QueryOptions{WaitIndex: index}
	if index > 0 {
		q.WaitTime = m.waitTime
	}
	return q.WithContext(ctx)
}

// next is the index of the following blocking query. When the index did
// not move it pauses pollFloor first, so a server that answers at once is
// not asked in a hot loop.
func (m *monitor) next(ctx context.Context, index, last uint64) (uint64, error) {
	if last > index {
		return last, nil
	}
	t := time.NewTimer(m.pollFloor)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return index, ctx.Err()
	case <-t.C:
		return index, nil
	}
}

// wrapCtx turns a deadline into errTimeout.
func (m *monitor) wrapCtx(ctx context.Context, what string, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w waiting for the %s", errTimeout, what)
	}
	return err
}
