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
