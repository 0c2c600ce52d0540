package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEndpoints(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		call     func(c *Client) (any, error)
		method   string
		path     string
		query    map[string]string
		wantBody string
		check    func(t *testing.T, out any)
	}{
		{name: "jobs info", body: `{"ID":"web","Type":"service"}`, method: "GET", path: "/v1/job/web",
			call: func(c *Client) (any, error) { j, _, err := c.Jobs().Info("web", nil); return j, err }},
		{name: "jobs deregister", body: `{"EvalID":"e2"}`, method: "DELETE", path: "/v1/job/web",
			call: func(c *Client) (any, error) { r, _, err := c.Jobs().Deregister("web", false, nil); return r, err }},
		{name: "jobs deregister purge", body: `{"EvalID":"e2"}`, method: "DELETE", path: "/v1/job/web",
			query: map[string]string{"purge": "true"},
			call:  func(c *Client) (any, error) { r, _, err := c.Jobs().Deregister("web", true, nil); return r, err }},
		{name: "jobs allocations", body: `[{"ID":"a1","EvalID":"e1"}]`, method: "GET", path: "/v1/job/web/allocations",
			call: func(c *Client) (any, error) { r, _, err := c.Jobs().Allocations("web", nil); return r, err }},
		{name: "jobs evaluations", body: `[{"ID":"e1"}]`, method: "GET", path: "/v1/job/web/evaluations",
			call: func(c *Client) (any, error) { r, _, err := c.Jobs().Evaluations("web", nil); return r, err }},
		{name: "jobs summary", body: `{"JobID":"web","Summary":{"g":{"Running":2}}}`, method: "GET", path: "/v1/job/web/summary",
			call:  func(c *Client) (any, error) { r, _, err := c.Jobs().Summary("web", nil); return r, err },
			check: func(t *testing.T, out any) { require.Equal(t, 2, out.(*JobSummary).Summary["g"].Running) }},
		{name: "jobs parse", body: `{"ID":"web"}`, method: "POST", path: "/v1/jobs/parse",
			wantBody: `{"JobHCL":"job \"web\" {}","Canonicalize":true}`,
			call:     func(c *Client) (any, error) { return c.Jobs().ParseHCL(`job "web" {}`, true) }},
		{name: "allocs list", body: `[{"ID":"a1"}]`, method: "GET", path: "/v1/allocations",
			call: func(c *Client) (any, error) { r, _, err := c.Allocations().List(nil); return r, err }},
		{name: "allocs info", body: `{"ID":"a1","ClientStatus":"running"}`, method: "GET", path: "/v1/allocation/a1",
			call: func(c *Client) (any, error) { r, _, err := c.Allocations().Info("a1", nil); return r, err }},
		{name: "allocs stop", body: `{"EvalID":"e3","Index":5}`, method: "POST", path: "/v1/allocation/a1/stop",
			call:  func(c *Client) (any, error) { return c.Allocations().Stop("a1", nil) },
			check: func(t *testing.T, out any) { require.Equal(t, "e3", out.(*AllocStopResponse).EvalID) }},
		{name: "evals list", body: `[{"ID":"e1"}]`, method: "GET", path: "/v1/evaluations",
			call: func(c *Client) (any, error) { r, _, err := c.Evaluations().List(nil); return r, err }},
		{name: "evals info", body: `{"ID":"e1","Status":"complete"}`, method: "GET", path: "/v1/evaluation/e1",
			call: func(c *Client) (any, error) { r, _, err := c.Evaluations().Info("e1", nil); return r, err }},
		{name: "nodes list", body: `[{"ID":"n1","Status":"ready"}]`, method: "GET", path: "/v1/nodes",
			call: func(c *Client) (any, error) { r, _, err := c.Nodes().List(nil); return r, err }},
		{name: "nodes info", body: `{"ID":"n1"}`, method: "GET", path: "/v1/node/n1",
			call: func(c *Client) (any, error) { r, _, err := c.Nodes().Info("n1", nil); return r, err }},
		{name: "nodes eligibility enable", body: `{"EvalIDs":["e"]}`, method: "POST", path: "/v1/node/n1/eligibility",
			wantBody: `{"NodeID":"n1","Eligibility":"eligible"}`,
			call:     func(c *Client) (any, error) { return c.Nodes().ToggleEligibility("n1", true, nil) }},
		{name: "nodes eligibility disable", body: `{}`, method: "POST", path: "/v1/node/n1/eligibility",
			wantBody: `{"NodeID":"n1","Eligibility":"ineligible"}`,
			call:     func(c *Client) (any, error) { return c.Nodes().ToggleEligibility("n1", false, nil) }},
		{name: "agent self", body: `{"config":{"Region":"global"},"member":{"Name":"s1"},"stats":{}}`, method: "GET", path: "/v1/agent/self",
			call:  func(c *Client) (any, error) { return c.Agent().Self() },
			check: func(t *testing.T, out any) { require.Equal(t, "s1", out.(*AgentSelf).Member.Name) }},
		{name: "agent members", body: `{"ServerName":"s1","Members":[{"Name":"s1","Port":4648}]}`, method: "GET", path: "/v1/agent/members",
			call:  func(c *Client) (any, error) { return c.Agent().Members() },
			check: func(t *testing.T, out any) { require.Equal(t, uint16(4648), out.(*ServerMembers).Members[0].Port) }},
		{name: "status leader", body: `"10.0.0.1:4647"`, method: "GET", path: "/v1/status/leader",
			call:  func(c *Client) (any, error) { return c.Status().Leader() },
			check: func(t *testing.T, out any) { require.Equal(t, "10.0.0.1:4647", out) }},
		{name: "status peers", body: `["a:4647","b:4647"]`, method: "GET", path: "/v1/status/peers",
			call:  func(c *Client) (any, error) { return c.Status().Peers() },
			check: func(t *testing.T, out any) { require.Equal(t, []string{"a:4647", "b:4647"}, out) }},
		{name: "raft configuration", body: `{"Servers":[{"ID":"s1","Leader":true}],"Index":3}`, method: "GET", path: "/v1/operator/raft/configuration",
			call:  func(c *Client) (any, error) { return c.Operator().RaftGetConfiguration(nil) },
			check: func(t *testing.T, out any) { require.True(t, out.(*RaftConfiguration).Servers[0].Leader) }},
		{name: "actors own", body: `{"Node":"n1","Actors":[{"Path":"scheduler"}]}`, method: "GET", path: "/v1/actors",
			query: map[string]string{"node": ""},
			call:  func(c *Client) (any, error) { return c.Actors().Tree("") }},
		{name: "actors of node", body: `{"Node":"n2","Actors":[]}`, method: "GET", path: "/v1/actors",
			query: map[string]string{"node": "n2"},
			call:  func(c *Client) (any, error) { return c.Actors().Tree("n2") },
			check: func(t *testing.T, out any) { require.Equal(t, "n2", out.(*ActorTree).Node) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, got := fakeServer(t, 200, tt.body)
			out, err := tt.call(c)
			require.NoError(t, err)
			require.NotNil(t, out)
			require.Equal(t, tt.method, got.method)
			require.Equal(t, tt.path, got.path)
			for k, v := range tt.query {
				require.Equal(t, v, got.query.Get(k), "query %s", k)
			}
			if tt.wantBody != "" {
				require.JSONEq(t, tt.wantBody, string(got.body))
			}
			if tt.check != nil {
				tt.check(t, out)
			}
		})
	}
}

func TestEndpoints404(t *testing.T) {
	c, _ := fakeServer(t, 404, "not found")
	calls := map[string]func() error{
		"job":   func() error { _, _, err := c.Jobs().Info("x", nil); return err },
		"alloc": func() error { _, _, err := c.Allocations().Info("x", nil); return err },
		"eval":  func() error { _, _, err := c.Evaluations().Info("x", nil); return err },
		"node":  func() error { _, _, err := c.Nodes().Info("x", nil); return err },
		"stop":  func() error { _, err := c.Allocations().Stop("x", nil); return err },
		"logs": func() error {
			_, err := c.AllocFS().Logs(context.Background(), "x", "t", "stdout", false, "", 0)
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			require.ErrorIs(t, call(), ErrNotFound)
		})
	}
}

func TestLogs(t *testing.T) {
	frames := func(w io.Writer) {
		enc := json.NewEncoder(w)
		_ = enc.Encode(&StreamFrame{Offset: 0, Data: []byte("hello "), File: "alloc/logs/t.stdout.0"})
		_ = enc.Encode(&StreamFrame{})
		_ = enc.Encode(&StreamFrame{Offset: 6, Data: []byte("world\n")})
	}
	tests := []struct {
		name  string
		ctype string
		write func(w io.Writer)
	}{
		{name: "plain", ctype: "text/plain; charset=utf-8", write: func(w io.Writer) { _, _ = io.WriteString(w, "hello world\n") }},
		{name: "frames", ctype: "application/json", write: frames},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q map[string]string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				require.Equal(t, "/v1/client/fs/logs/a1", r.URL.Path)
				q = map[string]string{}
				for k := range r.URL.Query() {
					q[k] = r.URL.Query().Get(k)
				}
				w.Header().Set("Content-Type", tt.ctype)
				tt.write(w)
			}))
			defer srv.Close()
			c, err := NewClient(&Config{Address: srv.URL})
			require.NoError(t, err)
			rc, err := c.AllocFS().Logs(context.Background(), "a1", "web", "stderr", true, OriginEnd, 100)
			require.NoError(t, err)
			data, err := io.ReadAll(rc)
			require.NoError(t, err)
			require.NoError(t, rc.Close())
			require.Equal(t, "hello world\n", string(data))
			require.Equal(t, map[string]string{"task": "web", "type": "stderr", "follow": "true",
				"plain": "true", "origin": "end", "offset": "100"}, q)
		})
	}
}
