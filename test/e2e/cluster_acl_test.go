package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/clustertest"
)

// aclTTL is the client's token cache TTL in the ACL cluster test.
const aclTTL = 500 * time.Millisecond

// TestClusterClientResolvesTokens: a client-only agent with ACLs on keeps
// no ACL state and resolves tokens through the server: a valid token works
// on the routes the client serves itself (and on those it forwards) for
// what its policy allows, an allocation's routes by the namespace the
// allocation is in (found in the client's own state); a denied, unknown or missing token is refused;
// a deleted token is refused, and a followed log it opened ends, once the
// client's cache TTL passed; and a
// token the client never saw is refused (fails closed) when no server
// answers.
func TestClusterClientResolvesTokens(t *testing.T) {
	dataRoot := t.TempDir()
	c := clustertest.New(t, 2, logDirOption(t)...)
	h := c.Hosts()
	srv := startAgent(t, h[0], "server0", dataRoot, []string{"agent", "-server", "-bootstrap-expect", "1", "-acl-enabled"})
	cli := startAgent(t, h[1], "client0", dataRoot, []string{"agent", "-client", "-servers", h[0].Addr,
		"-acl-enabled", "-acl-token-ttl", aclTTL.String()})
	tc := &testCluster{c: c, servers: []*agentProc{srv}, clients: []*agentProc{cli}}
	tc.eventually(t, formTimeout, "a leader", func() (bool, string) {
		l, err := srv.API.Status().Leader()
		return err == nil && l != "", fmt.Sprint(err)
	})
	boot, err := srv.API.ACL().Bootstrap("")
	require.NoError(t, err)
	mgmt, err := api.NewClient(&api.Config{Address: srv.HTTPAddr(), Token: boot.SecretID})
	require.NoError(t, err)
	srv.API = mgmt
	tc.eventually(t, formTimeout, "the client's node ready", func() (bool, string) { return tc.formed(1) })

	acls := mgmt.ACL()
	require.NoError(t, acls.ApplyPolicy(&api.ACLPolicy{Name: "reader",
		Rules: `namespace "default" { policy = "read" }` + "\nagent { policy = \"read\" }\nnode { policy = \"read\" }\n"}))
	require.NoError(t, acls.ApplyPolicy(&api.ACLPolicy{Name: "jobs-only", Rules: `namespace "default" { policy = "read" }`}))
	mk := func(name, policy string) *api.ACLToken {
		tok, err := acls.CreateToken(&api.ACLToken{Name: name, Type: "client", Policies: []string{policy}})
		require.NoError(t, err)
		return tok
	}
	require.NoError(t, acls.ApplyPolicy(&api.ACLPolicy{Name: "other-ns", Rules: `namespace "other" { policy = "write" }`}))
	require.NoError(t, acls.ApplyPolicy(&api.ACLPolicy{Name: "logs", Rules: `namespace "default" { capabilities = ["read-logs"] }`}))
	reader, jobsOnly, unseen := mk("reader", "reader"), mk("jobs-only", "jobs-only"), mk("unseen", "reader")
	otherNs, logs := mk("other-ns", "other-ns"), mk("logs", "logs")

	job := filepath.Join(t.TempDir(), "acl.hcl")
	require.NoError(t, os.WriteFile(job, []byte(spinJob{ID: "acl", Count: 1}.hcl()), 0o644))
	out, code := tc.cli(t, srv, "job run", "-token", boot.SecretID, "-detach", job)
	require.Equal(t, 0, code, out)
	alloc := tc.waitRunning(t, "acl", 1, settleTimeout, nil)[0].ID

	// status asks the client's own HTTP API with secret.
	status := func(path, secret string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, cli.HTTPAddr()+path, nil)
		require.NoError(t, err)
		if secret != "" {
			req.Header.Set(api.TokenHeader, secret)
		}
		// Longer than the client's own bound on a resolution (10 s), which
		// a dead server makes it wait out.
		resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tt := range []struct {
		name, path, secret string
		want               int
	}{
		{"agent read, served by the client", "/v1/agent/self", reader.SecretID, http.StatusOK},
		{"node read, served by the client", "/v1/client/stats", reader.SecretID, http.StatusOK},
		{"the actor tree, served by the client", "/v1/actors", reader.SecretID, http.StatusOK},
		{"forwarded to the server", "/v1/jobs", reader.SecretID, http.StatusOK},
		{"denied: no agent rule", "/v1/agent/self", jobsOnly.SecretID, http.StatusForbidden},
		{"denied: no node rule", "/v1/client/stats", jobsOnly.SecretID, http.StatusForbidden},
		{"no token: the anonymous policy", "/v1/agent/self", "", http.StatusForbidden},
		{"unknown token", "/v1/agent/self", "5b1f0c9e-0d6a-4c2b-9f4e-3a7d8e2c1b00", http.StatusForbidden},
		{"management token", "/v1/agent/self", boot.SecretID, http.StatusOK},
		{"an alloc of the token's namespace", "/v1/client/allocation/" + alloc + "/stats", reader.SecretID, http.StatusOK},
		{"an alloc of another namespace, by its own namespace", "/v1/client/allocation/" + alloc + "/stats?namespace=other", otherNs.SecretID, http.StatusForbidden},
		{"an alloc's logs", "/v1/client/fs/logs/" + alloc + "?task=spin&type=stdout&plain=true", logs.SecretID, http.StatusOK},
		{"an alloc's logs without read-logs", "/v1/client/fs/logs/" + alloc + "?task=spin&type=stdout&plain=true", reader.SecretID, http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := status(tt.path, tt.secret)
			require.Equal(t, tt.want, code, body)
		})
	}

	// A followed log on the client ends once its deleted token's cache
	// entry runs out; one opened with a token that lives goes on.
	follow := func(secret string) <-chan struct{} {
		req, err := http.NewRequest(http.MethodGet, cli.HTTPAddr()+"/v1/client/fs/logs/"+alloc+"?task=spin&type=stdout&plain=true&follow=true", nil)
		require.NoError(t, err)
		req.Header.Set(api.TokenHeader, secret)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { _ = resp.Body.Close() })
		require.Equal(t, http.StatusOK, resp.StatusCode)
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			_, _ = io.Copy(io.Discard, resp.Body)
		}()
		return ended
	}
	logs2 := mk("logs2", "logs")
	doomed, kept := follow(logs.SecretID), follow(logs2.SecretID)
	require.NoError(t, acls.DeleteToken(logs.AccessorID))
	select {
	case <-doomed:
	case <-time.After(aclTTL + 10*time.Second):
		t.Fatal("the client's log stream outlived its deleted token")
	}
	select {
	case <-kept:
		t.Fatal("a log stream whose token lives ended")
	default:
	}

	require.NoError(t, acls.DeleteToken(reader.AccessorID))
	deleted := time.Now()
	tc.eventually(t, 10*time.Second, "the deleted token refused on the client", func() (bool, string) {
		code, body := status("/v1/agent/self", reader.SecretID)
		return code == http.StatusForbidden, fmt.Sprintf("%d %s", code, body)
	})
	require.Less(t, time.Since(deleted), aclTTL+5*time.Second, "refused within about a TTL")

	srv.Kill(t)
	code, body := status("/v1/agent/self", unseen.SecretID)
	require.NotEqual(t, http.StatusOK, code, "no server answers: the client fails closed")
	require.Contains(t, body, "no server answered")
	requireNoSecrets(t, []*agentProc{srv, cli}, boot.SecretID, reader.SecretID, jobsOnly.SecretID, unseen.SecretID, otherNs.SecretID, logs.SecretID, logs2.SecretID)
}

// requireNoSecrets greps the agents' logs for each secret.
func requireNoSecrets(t *testing.T, agents []*agentProc, secrets ...string) {
	t.Helper()
	for _, a := range agents {
		log, err := a.Proc.Log()
		require.NoError(t, err)
		require.NotEmpty(t, log)
		for _, s := range secrets {
			require.NotContains(t, log, s, "a secret in %s's log", a.Name)
		}
	}
}
