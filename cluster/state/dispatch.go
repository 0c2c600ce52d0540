package state

import (
	"errors"
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/messages"
)

// Dispatches of parameterized jobs: a child "<parent>/dispatch-..." is
// registered by one DispatchJob command, refused unless its parent is a
// parameterized job that is not stopped; an idempotency token already
// used by a stored child of the same parent stores nothing.

// DispatchChildInfix joins a parameterized job's ID and the rest of its
// dispatched child's ID, as Nomad names children.
const DispatchChildInfix = "/dispatch-"

var (
	// ErrDispatchRefused is the FSM's answer to a dispatch of a job that
	// is not a parameterized job, or is stopped (a 400 to the user).
	ErrDispatchRefused = errors.New("state: dispatch refused")
	// ErrDuplicateDispatch is the FSM's answer to a dispatch whose
	// idempotency token a stored child already has; the error is a
	// *DuplicateDispatchError naming that child.
	ErrDuplicateDispatch = errors.New("state: duplicate dispatch")
)

// DuplicateDispatchError names the child an idempotency token already
// created.
type DuplicateDispatchError struct {
	Child *messages.Job
}

func (e *DuplicateDispatchError) Error() string {
	return fmt.Sprintf("%v: job %q has the idempotency token", ErrDuplicateDispatch, e.Child.GetID())
}

// Unwrap makes errors.Is(err, ErrDuplicateDispatch) hold.
func (e *DuplicateDispatchError) Unwrap() error { return ErrDuplicateDispatch }

// DispatchJobResult is the FSM's answer to DispatchJob.
type DispatchJobResult struct {
	Index  uint64
	JobID  string
	EvalID string
}

// DispatchedChild is the child of parameterized job (ns, parent) that
// was dispatched with idempotency token token, or nil ("" has none).
func (s *Snap) DispatchedChild(ns, parent, token string) *messages.Job {
	if token == "" {
		return nil
	}
	for _, j := range s.ChildJobs(ns, parent) {
		if j.GetDispatched() && j.GetDispatchIdempotencyToken() == token {
			return j
		}
	}
	return nil
}

// applyDispatchJob stores a dispatched child and its evaluation.
func applyDispatchJob(w *writeTxn, c *messages.DispatchJob) any {
	j := c.GetJob()
	if j == nil {
		return fmt.Errorf("%w: DispatchJob without a job", ErrBadCommand)
	}
	pid := j.GetParentID()
	if !j.GetDispatched() || !strings.HasPrefix(j.GetID(), pid+DispatchChildInfix) {
		return fmt.Errorf("%w: dispatch of %q with child %q", ErrBadCommand, pid, j.GetID())
	}
	snap := w.read()
	parent := snap.JobByID(j.Namespace, pid)
	switch {
	case parent == nil:
		return fmt.Errorf("%w: %q", ErrJobNotFound, pid)
	case !parent.IsParameterized():
		return fmt.Errorf("%w: job %q is not a parameterized job", ErrDispatchRefused, pid)
	case parent.GetStop():
		return fmt.Errorf("%w: job %q is stopped", ErrDispatchRefused, pid)
	}
	if old := snap.DispatchedChild(j.Namespace, pid, j.GetDispatchIdempotencyToken()); old != nil {
		return &DuplicateDispatchError{Child: copyJob(old)}
	}
	if snap.JobByID(j.Namespace, j.ID) != nil {
		return fmt.Errorf("%w: job %q exists", ErrBadCommand, j.ID)
	}
	j = Registered(nil, j, w.index, w.now)
	w.putJob(j)
	w.putJobVersion(j)
	if e := c.GetEval(); e != nil {
		e.JobModifyIndex = j.JobModifyIndex
		w.putEval(e)
	}
	return &DispatchJobResult{Index: w.index, JobID: j.ID, EvalID: c.GetEval().GetID()}
}
