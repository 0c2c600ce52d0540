package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// aclStream serves s and follows its event stream with token on topics.
func aclStream(t *testing.T, s *Server, token string, topics map[nomad.Topic][]string, ns string) <-chan *nomad.Events {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := nomad.NewClient(&nomad.Config{Address: srv.URL, SecretID: token})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := c.EventStream().Stream(ctx, topics, 0, &nomad.QueryOptions{Namespace: ns})
	require.NoError(t, err)
	return ch
}

// eventsUntil reads events until one has topic and key, returning all
// read (the last included).
func eventsUntil(t *testing.T, ch <-chan *nomad.Events, topic nomad.Topic, key string) []nomad.Event {
	t.Helper()
	var out []nomad.Event
	for {
		for _, e := range nextEvents(t, ch).Events {
			out = append(out, e)
			if e.Topic == topic && e.Key == key {
				return out
			}
		}
	}
}

// TestEventStreamACLTopics: ACL policy and token writes are events of
// the ACLToken and ACLPolicy topics with Nomad's types, read by Nomad's
// client; a token's event never carries its secret.
func TestEventStreamACLTopics(t *testing.T) {
	s, _, mgmt := aclServer(t, "")
	ch := aclStream(t, s, mgmt, map[nomad.Topic][]string{"ACLToken": {"*"}, "ACLPolicy": {"*"}}, "")

	rec := aclDo(t, s, "POST", "/v1/acl/policy/readers", mgmt, &api.ACLPolicy{Rules: `node { policy = "read" }`})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	secret := clientToken(t, s, mgmt, "second", `node { policy = "read" }`)
	tok := aclDo(t, s, "GET", "/v1/acl/token/self", secret, nil)
	require.Equal(t, http.StatusOK, tok.Code)
	var self api.ACLToken
	require.NoError(t, json.Unmarshal(tok.Body.Bytes(), &self))
	require.Equal(t, http.StatusOK, aclDo(t, s, "DELETE", "/v1/acl/token/"+self.AccessorID, mgmt, nil).Code)
	require.Equal(t, http.StatusOK, aclDo(t, s, "DELETE", "/v1/acl/policy/readers", mgmt, nil).Code)

	type seen struct{ topic, typ, key string }
	var got []seen
	var evs []nomad.Event
	for len(evs) < 5 {
		evs = append(evs, nextEvents(t, ch).Events...)
	}
	for _, e := range evs {
		got = append(got, seen{string(e.Topic), e.Type, e.Key})
		if e.Topic == "ACLToken" {
			p := e.Payload["ACLToken"].(map[string]any)
			require.Equal(t, self.AccessorID, p["AccessorID"])
			require.Equal(t, "second", p["Name"])
			require.Empty(t, p["SecretID"], "no secret in an event")
			require.NotContains(t, p, "SecretHash")
		}
	}
	require.Equal(t, []seen{
		{"ACLPolicy", "ACLPolicyUpserted", "readers"},
		{"ACLPolicy", "ACLPolicyUpserted", "second"},
		{"ACLToken", "ACLTokenUpserted", self.AccessorID},
		{"ACLToken", "ACLTokenDeleted", self.AccessorID},
		{"ACLPolicy", "ACLPolicyDeleted", "readers"},
	}, got)
}

// TestEventStreamPerTokenFilter: with ACLs on, a "*" stream across
// namespaces shows each token only what it may read: a read token of
// namespace default sees that namespace's jobs and evaluations, a token
// of namespace other with node read sees that namespace's and the nodes;
// neither sees the other's nor any ACL event, a management token sees
// all; a topic a token may not read is refused.
func TestEventStreamPerTokenFilter(t *testing.T) {
	s, b, mgmt := aclServer(t, "")
	b.mustApply(t, &messages.Command{Cmd: &messages.Command_UpsertNamespaces{UpsertNamespaces: &messages.UpsertNamespaces{
		Namespaces: []*messages.Namespace{{Name: "other"}}}}})
	dev := clientToken(t, s, mgmt, "dev", `namespace "default" { policy = "read" }`)
	ops := clientToken(t, s, mgmt, "ops", `namespace "other" { policy = "read" }
node { policy = "read" }`)
	all := map[nomad.Topic][]string{nomad.TopicAll: {"*"}}
	devCh, opsCh, mgmtCh := aclStream(t, s, dev, all, "*"), aclStream(t, s, ops, all, "*"), aclStream(t, s, mgmt, all, "*")

	job := func(ns, id string) {
		j := eventTestJob(id)
		j.Namespace = ns
		b.mustApply(t, &messages.Command{Cmd: &messages.Command_RegisterJob{RegisterJob: &messages.RegisterJob{Job: j,
			Eval: &messages.Evaluation{ID: id + "-eval", Namespace: ns, JobID: id, Status: "pending", Type: "service"}}}})
	}
	job("default", "web")
	job("other", "batch")
	b.mustApply(t, poolNode("node-1", "default"))
	clientToken(t, s, mgmt, "later", `node { policy = "read" }`)
	job("default", "web-end")
	job("other", "batch-end")

	keys := func(evs []nomad.Event) map[string]bool {
		out := map[string]bool{}
		for _, e := range evs {
			out[string(e.Topic)+":"+e.Key] = true
		}
		return out
	}
	devSaw := keys(eventsUntil(t, devCh, nomad.TopicJob, "web-end"))
	require.True(t, devSaw["Job:web"] && devSaw["Evaluation:web-eval"], "%v", devSaw)
	for k := range devSaw {
		require.Contains(t, []string{"Job:web", "Evaluation:web-eval", "Job:web-end", "Evaluation:web-end-eval"}, k)
	}
	opsSaw := keys(eventsUntil(t, opsCh, nomad.TopicJob, "batch-end"))
	require.True(t, opsSaw["Job:batch"] && opsSaw["Evaluation:batch-eval"] && opsSaw["Node:node-1"], "%v", opsSaw)
	for k := range opsSaw {
		require.NotContains(t, []string{"Job:web", "Job:web-end", "ACLPolicy:later"}, k)
	}
	mgmtSaw := keys(eventsUntil(t, mgmtCh, nomad.TopicJob, "batch-end"))
	for _, k := range []string{"Job:web", "Job:batch", "Node:node-1", "ACLPolicy:later"} {
		require.True(t, mgmtSaw[k], "management sees %s: %v", k, mgmtSaw)
	}

	for _, c := range []struct {
		token, query string
		code         int
	}{
		{dev, "topic=Node", http.StatusForbidden},
		{dev, "topic=ACLToken", http.StatusForbidden},
		{dev, "topic=Job&namespace=other", http.StatusForbidden},
		{ops, "topic=Node&topic=Job&namespace=other", http.StatusOK},
		{"", "topic=*", http.StatusForbidden},
	} {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/v1/event/stream?"+c.query, nil)
		if c.token != "" {
			r.Header.Set("X-Nomad-Token", c.token)
		}
		ctx, cancel := context.WithCancel(r.Context())
		cancel() // an allowed stream returns at once
		s.ServeHTTP(rec, r.WithContext(ctx))
		require.Equal(t, c.code, rec.Code, "%s: %s", c.query, rec.Body.String())
	}
}

// TestEventStreamPolicyChangeApplies: a token's policy changed while its
// stream is open applies to the events after it: the namespace it lost
// is no longer shown, the one it gained is.
func TestEventStreamPolicyChangeApplies(t *testing.T) {
	s, b, mgmt := aclServer(t, "")
	b.mustApply(t, &messages.Command{Cmd: &messages.Command_UpsertNamespaces{UpsertNamespaces: &messages.UpsertNamespaces{
		Namespaces: []*messages.Namespace{{Name: "other"}}}}})
	dev := clientToken(t, s, mgmt, "dev", `namespace "default" { policy = "read" }`)
	ch := aclStream(t, s, dev, map[nomad.Topic][]string{nomad.TopicJob: {"*"}}, "*")
	job := func(ns, id string) {
		j := eventTestJob(id)
		j.Namespace = ns
		b.mustApply(t, &messages.Command{Cmd: &messages.Command_RegisterJob{RegisterJob: &messages.RegisterJob{Job: j}}})
	}
	job("default", "before")
	require.Equal(t, "before", eventsUntil(t, ch, nomad.TopicJob, "before")[0].Key)

	rec := aclDo(t, s, "POST", "/v1/acl/policy/dev", mgmt, &api.ACLPolicy{Rules: `namespace "other" { policy = "read" }`})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	job("default", "hidden")
	job("other", "shown")
	for _, e := range eventsUntil(t, ch, nomad.TopicJob, "shown") {
		require.NotEqual(t, "hidden", e.Key, "the namespace the policy lost")
	}
}
