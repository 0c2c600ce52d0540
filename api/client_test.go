package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

// seen is one request the fake server received.
type seen struct {
	method string
	path   string
	query  url.Values
	body   []byte
}

// fakeServer answers every request with status and body, records it, and
// sets Nomad's query-meta headers.
func fakeServer(t *testing.T, status int, body string) (*Client, *seen) {
	t.Helper()
	got := &seen{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path, got.query = r.Method, r.URL.Path, r.URL.Query()
		got.body, _ = io.ReadAll(r.Body)
		w.Header().Set("X-Nomad-Index", "42")
		w.Header().Set("X-Nomad-KnownLeader", "true")
		w.Header().Set("X-Nomad-LastContact", "7")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(&Config{Address: srv.URL})
	require.NoError(t, err)
	return c, got
}

func TestNewClientAddress(t *testing.T) {
	tests := []struct {
		name, addr, env, want string
		wantErr               bool
	}{
		{name: "explicit", addr: "http://10.0.0.1:4646", want: "http://10.0.0.1:4646"},
		{name: "bare host port", addr: "10.0.0.1:4646", want: "http://10.0.0.1:4646"},
		{name: "from env", env: "http://10.0.0.2:4646", want: "http://10.0.0.2:4646"},
		{name: "default", want: DefaultAddress},
		{name: "bad scheme", addr: "ftp://x", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(AddressEnv, tt.env)
			c, err := NewClient(&Config{Address: tt.addr})
			if tt.wantErr {
				require.ErrorIs(t, err, ErrBadAddress)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, c.Address())
		})
	}
}

func TestQueryMetaAndBlockingParams(t *testing.T) {
	c, got := fakeServer(t, 200, `[{"ID":"j1","Type":"batch","Priority":50}]`)
	q := &QueryOptions{
		Region: "global", Namespace: "default", AllowStale: true,
		WaitIndex: 17, WaitTime: 30 * time.Second, Prefix: "j",
		Params: map[string]string{"extra": "x"},
	}
	jobs, qm, err := c.Jobs().List(q)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.Equal(t, "batch", jobs[0].Type)
	require.Equal(t, &QueryMeta{LastIndex: 42, KnownLeader: true, LastContact: 7 * time.Millisecond}, qm)
	require.Equal(t, "17", got.query.Get("index"))
	require.Equal(t, "30s", got.query.Get("wait"))
	require.True(t, got.query.Has("stale"))
	require.Equal(t, "global", got.query.Get("region"))
	require.Equal(t, "default", got.query.Get("namespace"))
	require.Equal(t, "j", got.query.Get("prefix"))
	require.Equal(t, "x", got.query.Get("extra"))
}

func TestTroupeIndexHeaderFallback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Troupe-Index", "9")
		_, _ = io.WriteString(w, `[]`)
	}))
	defer srv.Close()
	c, err := NewClient(&Config{Address: srv.URL})
	require.NoError(t, err)
	_, qm, err := c.Evaluations().List(nil)
	require.NoError(t, err)
	require.Equal(t, uint64(9), qm.LastIndex)
	require.False(t, qm.KnownLeader)
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     string
		notFound bool
		msg      string
	}{
		{name: "404", status: 404, body: "job not found\n", notFound: true,
			msg: "Unexpected response code: 404 (job not found)"},
		{name: "400", status: 400, body: `group "web": task "t": resources.memory must be greater than 0`,
			msg: `Unexpected response code: 400 (group "web": task "t": resources.memory must be greater than 0)`},
		{name: "500", status: 500, body: "boom", msg: "Unexpected response code: 500 (boom)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := fakeServer(t, tt.status, tt.body)
			_, _, err := c.Jobs().Info("x", nil)
			var apiErr *APIError
			require.ErrorAs(t, err, &apiErr)
			require.Equal(t, tt.status, apiErr.StatusCode)
			require.Equal(t, tt.msg, err.Error())
			require.Equal(t, tt.notFound, IsNotFound(err))
		})
	}
}

func TestDecodeError(t *testing.T) {
	c, _ := fakeServer(t, 200, `{not json`)
	_, _, err := c.Nodes().Info("n", nil)
	require.ErrorIs(t, err, ErrDecode)
}

func TestContextCancelsBlockingQuery(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	c, err := NewClient(&Config{Address: srv.URL})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, _, err = c.Jobs().Allocations("j", (&QueryOptions{WaitIndex: 5, WaitTime: time.Minute}).WithContext(ctx))
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestRegisterSendsJob(t *testing.T) {
	c, got := fakeServer(t, 200, `{"EvalID":"e1","EvalCreateIndex":3,"JobModifyIndex":3,"Index":3}`)
	job := &messages.Job{ID: "web", Type: "service", TaskGroups: []*messages.TaskGroup{{Name: "g", Count: 2}}}
	resp, wm, err := c.Jobs().Register(job, &WriteOptions{Namespace: "default"})
	require.NoError(t, err)
	require.Equal(t, "e1", resp.EvalID)
	require.Equal(t, uint64(42), wm.LastIndex)
	require.Equal(t, http.MethodPut, got.method)
	require.Equal(t, "/v1/jobs", got.path)
	require.Equal(t, "default", got.query.Get("namespace"))
	var sent JobRegisterRequest
	require.NoError(t, json.Unmarshal(got.body, &sent))
	require.Equal(t, "web", sent.Job.ID)
	require.Equal(t, int32(2), sent.Job.TaskGroups[0].Count)
}
