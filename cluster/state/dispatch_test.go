package state

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func parameterizedJob(id string) *messages.Job {
	j := testJob(id, 100, 100)
	j.Type = "batch"
	j.ParameterizedJob = &messages.ParameterizedJobConfig{Payload: "optional"}
	return j
}

func dispatched(parent, suffix, token string) *messages.Job {
	c := testJob(parent+DispatchChildInfix+suffix, 100, 100)
	c.Type, c.ParentID, c.Dispatched, c.DispatchIdempotencyToken = "batch", parent, true, token
	c.Payload = []byte("in")
	return c
}

func dispatchCmd(child *messages.Job, evalID string) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_DispatchJob{DispatchJob: &messages.DispatchJob{
		Job: child, Eval: testEval(evalID, child.ID, messages.EvalStatusPending)}}}
}

// TestDispatchIdempotency: the FSM decides the token, so the second of two
// dispatches with one token (two racing requests) stores nothing and
// names the first child; another token, or none, makes a new child.
func TestDispatchIdempotency(t *testing.T) {
	h := newHarness(t)
	h.apply(registerJob(parameterizedJob("render"), nil))
	res := h.apply(dispatchCmd(dispatched("render", "1-aaaaaaaa", "tok"), "e1"))
	require.Equal(t, &DispatchJobResult{Index: 2, JobID: "render/dispatch-1-aaaaaaaa", EvalID: "e1"}, res)

	res = h.apply(dispatchCmd(dispatched("render", "1-bbbbbbbb", "tok"), "e2"))
	var dup *DuplicateDispatchError
	require.ErrorAs(t, res.(error), &dup)
	require.ErrorIs(t, res.(error), ErrDuplicateDispatch)
	require.Equal(t, "render/dispatch-1-aaaaaaaa", dup.Child.GetID())
	require.EqualValues(t, 2, dup.Child.GetCreateIndex())
	snap := h.snap()
	require.Nil(t, snap.JobByID("default", "render/dispatch-1-bbbbbbbb"))
	require.Nil(t, snap.EvalByID("e2"), "the refused dispatch queued no evaluation")

	require.IsType(t, &DispatchJobResult{}, h.apply(dispatchCmd(dispatched("render", "1-cccccccc", "other"), "e3")))
	require.IsType(t, &DispatchJobResult{}, h.apply(dispatchCmd(dispatched("render", "1-dddddddd", ""), "e4")))
	require.IsType(t, &DispatchJobResult{}, h.apply(dispatchCmd(dispatched("render", "1-eeeeeeee", ""), "e5")),
		"no token: every dispatch is new")
	snap = h.snap()
	require.Len(t, snap.ChildJobs("default", "render"), 4)
	c := snap.JobByID("default", "render/dispatch-1-aaaaaaaa")
	require.True(t, c.Dispatched)
	require.Equal(t, []byte("in"), c.Payload)
	require.Equal(t, "tok", snap.DispatchedChild("default", "render", "tok").GetDispatchIdempotencyToken())
	require.Equal(t, messages.JobStatusRunning, snap.JobByID("default", "render").GetStatus(),
		"a parameterized parent runs while not stopped, as Nomad shows it")
}

func TestDispatchRefused(t *testing.T) {
	plain := testJob("plain", 100, 100)
	stopped := parameterizedJob("stopped")
	stopped.Stop = true
	for _, tc := range []struct {
		name  string
		child *messages.Job
		want  error
	}{
		{"unknown parent", dispatched("nobody", "1-aaaaaaaa", ""), ErrJobNotFound},
		{"not parameterized", dispatched("plain", "1-aaaaaaaa", ""), ErrDispatchRefused},
		{"stopped parent", dispatched("stopped", "1-aaaaaaaa", ""), ErrDispatchRefused},
		{"not marked dispatched", func() *messages.Job {
			c := dispatched("render", "1-aaaaaaaa", "")
			c.Dispatched = false
			return c
		}(), ErrBadCommand},
		{"ID not the parent's", func() *messages.Job {
			c := dispatched("render", "1-aaaaaaaa", "")
			c.ID = "elsewhere"
			return c
		}(), ErrBadCommand},
		{"parent a dispatched child", dispatched("render/dispatch-0-00000000", "1-aaaaaaaa", ""), ErrDispatchRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.apply(registerJob(plain, nil))
			h.apply(registerJob(stopped, nil))
			h.apply(registerJob(parameterizedJob("render"), nil))
			h.apply(dispatchCmd(dispatched("render", "0-00000000", ""), "e0"))
			before := len(h.snap().Jobs())
			res := h.apply(dispatchCmd(tc.child, "e1"))
			err, ok := res.(error)
			require.True(t, ok, "%v", res)
			require.True(t, errors.Is(err, tc.want), "%v", err)
			require.Len(t, h.snap().Jobs(), before)
			require.Nil(t, h.snap().EvalByID("e1"))
		})
	}
}
