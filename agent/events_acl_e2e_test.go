package agent

import (
	"context"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestEventStreamPerTokenOnAgent: on a real agent with ACLs on, two
// tokens follow every topic across namespaces with Nomad's client. The
// token that reads namespace "default" sees that namespace's jobs and
// evaluations and no node; the token that reads namespace "ops" and the
// nodes sees those and no job of "default"; neither sees the ACL writes.
func TestEventStreamPerTokenOnAgent(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.ACLEnabled = true
	a := startAgent(t, cfg)
	t.Cleanup(func() { _ = a.Shutdown() })
	anon, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	boot, _, err := anon.ACLTokens().Bootstrap(nil)
	require.NoError(t, err)
	mgmt, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr(), SecretID: boot.SecretID})
	require.NoError(t, err)
	_, err = mgmt.Namespaces().Register(&nomad.Namespace{Name: "ops"}, nil)
	require.NoError(t, err)
	token := func(name, rules string) *nomad.Client {
		_, err := mgmt.ACLPolicies().Upsert(&nomad.ACLPolicy{Name: name, Rules: rules}, nil)
		require.NoError(t, err)
		tok, _, err := mgmt.ACLTokens().Create(&nomad.ACLToken{Name: name, Type: "client", Policies: []string{name}}, nil)
		require.NoError(t, err)
		c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr(), SecretID: tok.SecretID})
		require.NoError(t, err)
		return c
	}
	dev := token("dev", `namespace "default" { policy = "read" }`)
	ops := token("ops", `namespace "ops" { policy = "read" }
node { policy = "read" }`)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	all := map[nomad.Topic][]string{nomad.TopicAll: {"*"}}
	devCh, err := dev.EventStream().Stream(ctx, all, 0, &nomad.QueryOptions{Namespace: "*"})
	require.NoError(t, err)
	opsCh, err := ops.EventStream().Stream(ctx, all, 0, &nomad.QueryOptions{Namespace: "*"})
	require.NoError(t, err)

	register := func(ns, id string) {
		job := rawExecJob(id, "sleep 100")
		job.Namespace = &ns
		_, _, err := mgmt.Jobs().Register(job, nil)
		require.NoError(t, err)
	}
	register("default", "web")
	register("ops", "batch")
	_, err = mgmt.ACLPolicies().Upsert(&nomad.ACLPolicy{Name: "later", Rules: `node { policy = "read" }`}, nil)
	require.NoError(t, err)
	register("default", "web-end")
	register("ops", "batch-end")

	// seen reads a stream until the job named last appears.
	seen := func(ch <-chan *nomad.Events, last string) map[string]string {
		out := map[string]string{} // topic:key -> namespace
		for {
			select {
			case evs := <-ch:
				require.NotNil(t, evs, "stream closed")
				require.NoError(t, evs.Err)
				for _, e := range evs.Events {
					out[string(e.Topic)+":"+e.Key] = payloadNamespace(e)
					if e.Topic == nomad.TopicJob && e.Key == last {
						return out
					}
				}
			case <-ctx.Done():
				t.Fatalf("never saw job %s; saw %v", last, out)
			}
		}
	}
	devSaw, opsSaw := seen(devCh, "web-end"), seen(opsCh, "batch-end")
	require.Contains(t, devSaw, "Job:web")
	require.Contains(t, opsSaw, "Job:batch")
	require.Contains(t, opsSaw, "Node:"+a.Node().GetID(), "node read sees the node")
	for k, ns := range devSaw {
		require.Equal(t, "default", ns, "dev saw %s", k)
	}
	for k, ns := range opsSaw {
		require.NotEqual(t, "default", ns, "ops saw %s", k)
		require.NotContains(t, k, "ACL", "ops saw %s", k)
	}
}

// payloadNamespace is the namespace of an event's object ("": none).
func payloadNamespace(e nomad.Event) string {
	for _, obj := range e.Payload {
		if m, ok := obj.(map[string]any); ok {
			ns, _ := m["Namespace"].(string)
			return ns
		}
	}
	return ""
}
