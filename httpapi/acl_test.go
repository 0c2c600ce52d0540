package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

func TestACLBootstrapTwiceThenReset(t *testing.T) {
	reset := filepath.Join(t.TempDir(), "acl-bootstrap-reset")
	s, b, first := aclServer(t, reset)
	rec := aclDo(t, s, "POST", "/v1/acl/bootstrap", "", nil)
	require.Equal(t, http.StatusBadRequest, rec.Code)
	body := strings.TrimSpace(rec.Body.String())
	require.Contains(t, body, "ACL bootstrap already done (reset index: ")
	idx := strings.TrimSuffix(body[strings.LastIndex(body, " ")+1:], ")")
	_, err := strconv.ParseUint(idx, 10, 64)
	require.NoError(t, err, body)

	require.NoError(t, os.WriteFile(reset, []byte("999\n"), 0o600))
	rec = aclDo(t, s, "POST", "/v1/acl/bootstrap", "", nil)
	require.Equal(t, http.StatusBadRequest, rec.Code, "a wrong reset index lets nothing through")

	require.NoError(t, os.WriteFile(reset, []byte(idx+"\n"), 0o600))
	rec = aclDo(t, s, "POST", "/v1/acl/bootstrap", "", &api.ACLBootstrapRequest{BootstrapSecret: "operator-chosen-secret"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var tok api.ACLToken
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &tok))
	require.Equal(t, "operator-chosen-secret", tok.SecretID)
	require.Equal(t, "management", tok.Type)
	require.NoFileExists(t, reset, "a used reset file is removed")
	// Both management tokens work; the secrets are stored as hashes only.
	for _, secret := range []string{first, tok.SecretID} {
		require.Equal(t, http.StatusOK, aclDo(t, s, "GET", "/v1/acl/tokens", secret, nil).Code)
		for _, st := range b.Store().Snapshot().ACLTokens() {
			require.NotContains(t, string(st.SecretHash), secret)
		}
	}
	rec = aclDo(t, s, "GET", "/v1/acl/tokens", first, nil)
	require.NotContains(t, rec.Body.String(), first)
	require.NotContains(t, rec.Body.String(), tok.SecretID)
}

func TestACLExpiredToken(t *testing.T) {
	s, b, mgmt := aclServer(t, "")
	rec := aclDo(t, s, "POST", "/v1/acl/policy/nodes", mgmt, &api.ACLPolicy{Rules: `node { policy = "read" }`})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = aclDo(t, s, "POST", "/v1/acl/token", mgmt, map[string]any{"Name": "brief", "Type": "client", "Policies": []string{"nodes"}, "ExpirationTTL": "1h"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var tok api.ACLToken
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &tok))
	require.NotNil(t, tok.ExpirationTime)
	require.Equal(t, b.Now().Add(time.Hour).UTC(), tok.ExpirationTime.UTC())

	require.Equal(t, http.StatusOK, aclDo(t, s, "GET", "/v1/nodes", tok.SecretID, nil).Code)
	b.now.Add(int64(time.Hour))
	rec = aclDo(t, s, "GET", "/v1/nodes", tok.SecretID, nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "ACL token expired", strings.TrimSpace(rec.Body.String()))

	// A collection removes it.
	require.NotNil(t, b.Store().Snapshot().ACLTokenByAccessor(tok.AccessorID))
	rec = aclDo(t, s, "PUT", "/v1/system/gc", mgmt, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Nil(t, b.Store().Snapshot().ACLTokenByAccessor(tok.AccessorID))
	rec = aclDo(t, s, "GET", "/v1/nodes", tok.SecretID, nil)
	require.Equal(t, "ACL token not found", strings.TrimSpace(rec.Body.String()))
}

func TestACLListsFilterByNamespace(t *testing.T) {
	s, b, mgmt := aclServer(t, "")
	b.mustApply(t, &messages.Command{Cmd: &messages.Command_UpsertNamespaces{UpsertNamespaces: &messages.UpsertNamespaces{
		Namespaces: []*messages.Namespace{{Name: "prod"}}}}})
	for _, ns := range []string{"default", "prod"} {
		j := testJobInNs("web", ns)
		b.mustApply(t, &messages.Command{Cmd: &messages.Command_RegisterJob{RegisterJob: &messages.RegisterJob{Job: j}}})
	}
	reader := clientToken(t, s, mgmt, "prod-reader", `namespace "prod" { policy = "read" }`)
	rec := aclDo(t, s, "GET", "/v1/jobs?namespace=*", reader, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var jobs []map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &jobs))
	require.Len(t, jobs, 1)
	require.Equal(t, "prod", jobs[0]["Namespace"])
	require.Equal(t, http.StatusForbidden, aclDo(t, s, "GET", "/v1/job/web", reader, nil).Code)
	require.Equal(t, http.StatusOK, aclDo(t, s, "GET", "/v1/job/web?namespace=prod", reader, nil).Code)
	rec = aclDo(t, s, "GET", "/v1/namespaces", reader, nil)
	require.Contains(t, rec.Body.String(), `"prod"`)
	require.NotContains(t, rec.Body.String(), `"default"`)
	// A job whose body names a namespace the token may not write.
	writer := clientToken(t, s, mgmt, "default-writer", `namespace "default" { policy = "write" }`)
	before := b.Store().Snapshot().Index()
	rec = aclDo(t, s, "PUT", "/v1/jobs", writer, map[string]any{"Job": map[string]any{"ID": "x", "Namespace": "prod",
		"TaskGroups": []any{map[string]any{"Name": "g", "Tasks": []any{map[string]any{"Name": "t", "Driver": "exec", "Config": map[string]any{"command": "/bin/true"}}}}}}})
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, before, b.Store().Snapshot().Index())
}

func testJobInNs(id, ns string) *messages.Job {
	return &messages.Job{ID: id, Name: id, Namespace: ns, Type: "service", Priority: 50, Region: "global",
		Datacenters: []string{"dc1"}, TaskGroups: []*messages.TaskGroup{{Name: "g", Count: 1,
			Tasks: []*messages.Task{{Name: "t", Driver: "exec"}}}}}
}

// TestACLTokenDeletedEndsBlockingQuery: a blocking query whose token is
// deleted while it waits answers 403 at once, not at the end of ?wait=.
func TestACLTokenDeletedEndsBlockingQuery(t *testing.T) {
	s, b, mgmt := aclServer(t, "")
	tok := clientToken(t, s, mgmt, "reader", `namespace "default" { policy = "read" }`)
	rec := aclDo(t, s, "GET", "/v1/jobs", tok, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	idx := rec.Header().Get("X-Nomad-Index")
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		r := httptest.NewRequest("GET", "/v1/jobs?index="+idx+"&wait=5m", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		done <- rec
	}()
	accessor := b.Store().Snapshot().ACLTokenBySecret(tok).AccessorID
	require.Equal(t, http.StatusOK, aclDo(t, s, "DELETE", "/v1/acl/token/"+accessor, mgmt, nil).Code)
	select {
	case rec := <-done:
		require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking query outlived its token")
	}
}

// aclLogsBackend serves logsBackend's log file over an ACL store.
type aclLogsBackend struct {
	*aclBackend
	logs logsBackend
}

func (b *aclLogsBackend) AllocForLogs(id string) (*messages.Allocation, *messages.Job, string, error) {
	return b.logs.AllocForLogs(id)
}

func (b *aclLogsBackend) TaskLogPath(a, task, typ string) (string, error) {
	return b.logs.TaskLogPath(a, task, typ)
}

// TestACLTokenDeletedEndsLogStream: a followed log ends when its token is
// deleted.
func TestACLTokenDeletedEndsLogStream(t *testing.T) {
	_, ab, _ := aclServer(t, "")
	b := &aclLogsBackend{aclBackend: ab, logs: logsBackend{allocDirFixture(t)}}
	s := New(b, nil, Options{ACLEnabled: true})
	mgmt := bootstrapOn(t, s, ab)
	tok := clientToken(t, s, mgmt, "logs", `namespace "default" { capabilities = ["read-logs"] }`)
	srv := httptest.NewServer(s)
	defer srv.Close()
	req, err := http.NewRequestWithContext(context.Background(), "GET", srv.URL+"/v1/client/fs/logs/a1?task=web&type=stdout&follow=true&plain=true", nil)
	require.NoError(t, err)
	req.Header.Set("X-Nomad-Token", tok)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	buf := make([]byte, 10)
	_, err = resp.Body.Read(buf)
	require.NoError(t, err)

	accessor := ab.Store().Snapshot().ACLTokenBySecret(tok).AccessorID
	require.Equal(t, http.StatusOK, aclDo(t, s, "DELETE", "/v1/acl/token/"+accessor, mgmt, nil).Code)
	ended := make(chan error, 1)
	go func() {
		_, err := resp.Body.Read(make([]byte, 1024))
		for err == nil {
			_, err = resp.Body.Read(make([]byte, 1024))
		}
		ended <- err
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the log stream outlived its token")
	}
}

// bootstrapOn bootstraps s (whose store already has a bootstrap, from
// aclServer) through a reset and returns the new management secret.
func bootstrapOn(t *testing.T, s *Server, b *aclBackend) string {
	t.Helper()
	reset := filepath.Join(t.TempDir(), "reset")
	require.NoError(t, os.WriteFile(reset, []byte(strconv.FormatUint(b.Store().Snapshot().ACLBootstrapIndex(), 10)), 0o600))
	s.opts.ACLResetFile = reset
	rec := aclDo(t, s, "POST", "/v1/acl/bootstrap", "", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var tok api.ACLToken
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &tok))
	return tok.SecretID
}

// TestACLWithNomadClient drives the ACL API with Nomad's own client.
func TestACLWithNomadClient(t *testing.T) {
	b := &aclBackend{fsmBackend: newFSMBackend()}
	b.now.Store(time.Now().UnixNano())
	srv := httptest.NewServer(New(b, nil, Options{ACLEnabled: true}))
	defer srv.Close()
	anon, err := nomad.NewClient(&nomad.Config{Address: srv.URL})
	require.NoError(t, err)
	root, _, err := anon.ACLTokens().Bootstrap(nil)
	require.NoError(t, err)
	require.Equal(t, "management", root.Type)
	_, _, err = anon.ACLTokens().Bootstrap(nil)
	require.ErrorContains(t, err, "ACL bootstrap already done")
	_, _, err = anon.Jobs().List(nil)
	require.ErrorContains(t, err, "Permission denied")

	c, err := nomad.NewClient(&nomad.Config{Address: srv.URL, SecretID: root.SecretID})
	require.NoError(t, err)
	_, err = c.ACLPolicies().Upsert(&nomad.ACLPolicy{Name: "readonly", Description: "reads", Rules: `namespace "default" { policy = "read" }`}, nil)
	require.NoError(t, err)
	_, err = c.ACLPolicies().Upsert(&nomad.ACLPolicy{Name: "bad", Rules: `namespace "default" { policy = "sudo" }`}, nil)
	require.ErrorContains(t, err, `unknown policy "sudo"`)
	pols, _, err := c.ACLPolicies().List(nil)
	require.NoError(t, err)
	require.Len(t, pols, 1)
	pol, _, err := c.ACLPolicies().Info("readonly", nil)
	require.NoError(t, err)
	require.Contains(t, pol.Rules, `policy = "read"`)

	tok, _, err := c.ACLTokens().Create(&nomad.ACLToken{Name: "ro", Type: "client", Policies: []string{"readonly"}}, nil)
	require.NoError(t, err)
	require.NotEmpty(t, tok.SecretID)
	ro, err := nomad.NewClient(&nomad.Config{Address: srv.URL, SecretID: tok.SecretID})
	require.NoError(t, err)
	self, _, err := ro.ACLTokens().Self(nil)
	require.NoError(t, err)
	require.Equal(t, tok.AccessorID, self.AccessorID)
	require.Empty(t, self.SecretID, "a read never answers the secret")
	_, _, err = ro.Jobs().List(nil)
	require.NoError(t, err)
	_, _, err = ro.Nodes().List(nil)
	require.ErrorContains(t, err, "Permission denied")
	_, _, err = ro.ACLTokens().List(nil)
	require.ErrorContains(t, err, "Permission denied")

	tok.Name = "renamed"
	upd, _, err := c.ACLTokens().Update(tok, nil)
	require.NoError(t, err)
	require.Equal(t, "renamed", upd.Name)
	list, _, err := c.ACLTokens().List(nil)
	require.NoError(t, err)
	require.Len(t, list, 2)
	info, _, err := c.ACLTokens().Info(tok.AccessorID, nil)
	require.NoError(t, err)
	require.Equal(t, "renamed", info.Name)
	_, err = c.ACLTokens().Delete(tok.AccessorID, nil)
	require.NoError(t, err)
	_, _, err = ro.Jobs().List(nil)
	require.ErrorContains(t, err, "ACL token not found")
	_, err = c.ACLPolicies().Delete("readonly", nil)
	require.NoError(t, err)
}
