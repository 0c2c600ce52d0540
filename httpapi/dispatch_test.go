package httpapi

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/golang/snappy"
	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func registerParameterized(t *testing.T, c *nomad.Client, id, payload string) {
	t.Helper()
	job := nomad.NewBatchJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	job.ParameterizedJob = &nomad.ParameterizedJobConfig{Payload: payload, MetaRequired: []string{"k"}}
	tg := nomad.NewTaskGroup("g", 1)
	tg.AddTask(nomad.NewTask("t", "exec").SetConfig("command", "/bin/true").Require(&nomad.Resources{CPU: new(20), MemoryMB: new(16)}))
	job.AddTaskGroup(tg)
	resp, _, err := c.Jobs().Register(job, nil)
	require.NoError(t, err)
	require.Empty(t, resp.EvalID, "no evaluation for a parameterized job")
}

// TestDispatchRefusalsProposeNothing: every refused dispatch is a 400 (404
// for an unknown job) decided before anything goes to raft.
func TestDispatchRefusalsProposeNothing(t *testing.T) {
	b := newFSMBackend()
	c := nomadAgainst(t, b)
	registerParameterized(t, c, "p", "forbidden")
	index := b.index
	for _, tc := range []struct {
		name    string
		job     string
		meta    map[string]string
		payload []byte
		code    int
	}{
		{"payload forbidden", "p", map[string]string{"k": "v"}, []byte("x"), http.StatusBadRequest},
		{"meta missing", "p", nil, nil, http.StatusBadRequest},
		{"meta unknown", "p", map[string]string{"k": "v", "z": "1"}, nil, http.StatusBadRequest},
		{"unknown job", "nope", nil, nil, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := c.Jobs().Dispatch(tc.job, tc.meta, tc.payload, "", nil)
			var ue nomad.UnexpectedResponseError
			require.ErrorAs(t, err, &ue)
			require.Equal(t, tc.code, ue.StatusCode(), ue.Body())
		})
	}
	require.Equal(t, index, b.index, "nothing was proposed")
	require.Len(t, b.Store().Snapshot().Jobs(), 1)
	require.Empty(t, b.Store().Snapshot().EvalsByJob("default", "p"))
}

// TestDispatchIdempotentUnderRace: dispatches racing with one token make
// one child, and every answer names it.
func TestDispatchIdempotentUnderRace(t *testing.T) {
	b := newFSMBackend()
	c := nomadAgainst(t, b)
	registerParameterized(t, c, "p", "optional")
	const n = 16
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp, _, err := c.Jobs().Dispatch("p", map[string]string{"k": "v"}, nil, "", &nomad.WriteOptions{IdempotencyToken: "t"})
			if err == nil {
				ids[i] = resp.DispatchedJobID
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		require.Equal(t, ids[0], id)
	}
	children := b.Store().Snapshot().ChildJobs("default", "p")
	require.Len(t, children, 1)
	require.Equal(t, ids[0], children[0].GetID())
	require.Len(t, b.Store().Snapshot().EvalsByJob("default", ids[0]), 1)
}

// TestDispatchJSONShapes: Nomad's request (Payload in base64) and
// response fields, by raw HTTP.
func TestDispatchJSONShapes(t *testing.T) {
	b := newFSMBackend()
	c := nomadAgainst(t, b)
	registerParameterized(t, c, "p", "required")
	srv := c.Address()
	resp, err := http.Post(srv+"/v1/job/p/dispatch?idempotency_token=x", "application/json",
		strings.NewReader(`{"JobID":"p","Payload":"aGVsbG8=","Meta":{"k":"v"}}`))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	for _, f := range []string{`"DispatchedJobID":"p/dispatch-`, `"EvalID":"`, `"EvalCreateIndex":`, `"JobCreateIndex":`, `"Index":`} {
		require.Contains(t, string(body), f)
	}
	child := b.Store().Snapshot().DispatchedChild("default", "p", "x")
	require.NotNil(t, child)
	require.Equal(t, snappy.Encode(nil, []byte("hello")), child.GetPayload(), "stored snappy-compressed, as Nomad stores it")
	require.Equal(t, messages.JobStatusPending, child.GetStatus())
	require.Nil(t, child.GetParameterizedJob())
}

// TestDispatchParentWithoutMeta: a parameterized block that names no meta
// and no payload rule (payload optional, Nomad's default) dispatches a
// child with no meta and no payload; a request with meta is a 400 that
// names the key and creates nothing.
func TestDispatchParentWithoutMeta(t *testing.T) {
	b := newFSMBackend()
	c := nomadAgainst(t, b)
	job := nomad.NewBatchJob("bare", "bare", "global", 50)
	job.Datacenters = []string{"dc1"}
	job.ParameterizedJob = &nomad.ParameterizedJobConfig{}
	tg := nomad.NewTaskGroup("g", 1)
	tg.AddTask(nomad.NewTask("t", "exec").SetConfig("command", "/bin/true").Require(&nomad.Resources{CPU: new(20), MemoryMB: new(16)}))
	job.AddTaskGroup(tg)
	_, _, err := c.Jobs().Register(job, nil)
	require.NoError(t, err)
	parent := b.Store().Snapshot().JobByID("default", "bare")
	require.Equal(t, "optional", parent.GetParameterizedJob().GetPayload(), "Nomad's default")
	require.Empty(t, parent.GetParameterizedJob().GetMetaRequired())
	require.Empty(t, parent.GetParameterizedJob().GetMetaOptional())

	index := b.index
	_, _, err = c.Jobs().Dispatch("bare", map[string]string{"k": "v"}, nil, "", nil)
	var ue nomad.UnexpectedResponseError
	require.ErrorAs(t, err, &ue)
	require.Equal(t, http.StatusBadRequest, ue.StatusCode(), ue.Body())
	require.Contains(t, ue.Body(), "unpermitted metadata keys: [k]")
	require.Equal(t, index, b.index, "nothing was proposed")
	require.Empty(t, b.Store().Snapshot().ChildJobs("default", "bare"))

	resp, _, err := c.Jobs().Dispatch("bare", nil, nil, "", nil)
	require.NoError(t, err)
	require.NotEmpty(t, resp.EvalID)
	snap := b.Store().Snapshot()
	children := snap.ChildJobs("default", "bare")
	require.Len(t, children, 1)
	child := children[0]
	require.Equal(t, resp.DispatchedJobID, child.GetID())
	require.True(t, strings.HasPrefix(child.GetID(), "bare/dispatch-"), child.GetID())
	require.Equal(t, "bare", child.GetParentID())
	require.True(t, child.GetDispatched())
	require.Empty(t, child.GetMeta(), "no meta from the request or the parent")
	require.Empty(t, child.GetPayload())
	require.Nil(t, child.GetParameterizedJob())
	require.Len(t, snap.EvalsByJob("default", child.GetID()), 1)

	got, _, err := c.Jobs().Info(child.GetID(), nil)
	require.NoError(t, err)
	require.Empty(t, got.Meta)
	require.Empty(t, got.Payload)
	require.Equal(t, "bare", *got.ParentID)

	// A body with no Meta and no Payload at all, by raw HTTP.
	raw, err := http.Post(c.Address()+"/v1/job/bare/dispatch", "application/json", strings.NewReader(`{"JobID":"bare"}`))
	require.NoError(t, err)
	body, _ := io.ReadAll(raw.Body)
	raw.Body.Close()
	require.Equal(t, http.StatusOK, raw.StatusCode, string(body))
	require.Len(t, b.Store().Snapshot().ChildJobs("default", "bare"), 2)
}
