package agent

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/internal/syncbuf"
	"github.com/troupe-dev/troupe/messages"
)

// aclRawExecAgent is a dev agent with ACLs on and raw_exec enabled,
// bootstrapped: Nomad's client carries the management token. It logs at
// debug level into logs.
func aclRawExecAgent(t *testing.T, logs *syncbuf.Buffer) (*Agent, *nomad.Client) {
	t.Helper()
	cfg := testConfig(t, t.TempDir())
	cfg.RawExecEnabled, cfg.ACLEnabled = true, true
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a := startAgent(t, cfg)
	t.Cleanup(func() { _ = a.Shutdown() })
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	tok, _, err := c.ACLTokens().Bootstrap(nil)
	require.NoError(t, err)
	c.SetSecretID(tok.SecretID)
	return a, c
}

// waitFile polls for a file a task writes and returns its content.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	var b []byte
	require.Eventually(t, func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil && len(b) > 0
	}, 30*time.Second, 20*time.Millisecond, "%s never written", path)
	return string(b)
}

// TestWorkloadIdentityE2E: with ACLs on, a task with identity { env =
// true, file = true } reads its own job's variable through the HTTP API
// with $NOMAD_TOKEN (curl, in the task) and is refused another job's; its
// template renders its own variable; the JWT verifies against
// /.well-known/jwks.json and carries Nomad's claims. A template that reads
// another job's variable holds its task pending with an event that says
// why. The JWT is in no log line of the agent (at debug level).
func TestWorkloadIdentityE2E(t *testing.T) {
	var logs syncbuf.Buffer
	a, c := aclRawExecAgent(t, &logs)
	for path, secret := range map[string]string{"nomad/jobs/wi": "mine", "nomad/jobs/other": "theirs"} {
		_, _, err := c.Variables().Update(&nomad.Variable{Path: path, Items: map[string]string{"secret": secret}}, nil)
		require.NoError(t, err)
	}
	api := "http://" + a.HTTPAddr() + "/v1/var/nomad/jobs/"
	script := `curl -s -o local/own.json -w '%{http_code}' -H "X-Nomad-Token: $NOMAD_TOKEN" ` + api + `wi > local/own.code.tmp
curl -s -o local/other.json -w '%{http_code}' -H "Authorization: Bearer $NOMAD_TOKEN" ` + api + `other > local/other.code.tmp
printf %s "$NOMAD_TOKEN" > local/env_token.tmp
mv local/own.code.tmp local/own.code; mv local/other.code.tmp local/other.code; mv local/env_token.tmp local/env_token
exec sleep 300`
	job := rawExecJob("wi", script)
	task := job.TaskGroups[0].Tasks[0]
	task.Identity = &nomad.WorkloadIdentity{Env: true, File: true}
	task.Templates = []*nomad.Template{{EmbeddedTmpl: ptr(`{{ with nomadVar "nomad/jobs/wi" }}{{ .secret }}{{ end }}`),
		DestPath: ptr("local/own.txt")}}
	_, _, err := c.Jobs().Register(job, nil)
	require.NoError(t, err)
	allocID := waitAllocStatus(t, c, "wi", "running").ID
	dir := filepath.Join(a.AllocDir(), allocID, "t")

	require.Equal(t, "200", waitFile(t, filepath.Join(dir, "local/own.code")))
	require.Contains(t, waitFile(t, filepath.Join(dir, "local/own.json")), `"mine"`)
	require.Equal(t, "403", waitFile(t, filepath.Join(dir, "local/other.code")))
	require.NotContains(t, waitFile(t, filepath.Join(dir, "local/other.json")), "theirs")
	require.Equal(t, "mine", waitFile(t, filepath.Join(dir, "local/own.txt")))

	token := waitFile(t, filepath.Join(dir, "local/env_token"))
	file, err := os.ReadFile(filepath.Join(dir, "secrets/nomad_token"))
	require.NoError(t, err)
	require.Equal(t, token, string(file), "secrets/nomad_token holds the task's NOMAD_TOKEN")

	// A server signs only for the node the allocation is on; with ACLs on
	// a template's read without identity is refused (but a watch of the
	// index is answered).
	ctx := context.Background()
	resp0 := a.signIdentities(ctx, &messages.SignIdentitiesRequest{AllocID: allocID, NodeID: "another-node"})
	require.Equal(t, messages.CodeNotFound, resp0.GetError().ErrorCode())
	signed := a.signIdentities(ctx, &messages.SignIdentitiesRequest{AllocID: allocID, NodeID: a.Node().GetID()})
	require.Nil(t, signed.GetError())
	require.Len(t, signed.GetIdentities(), 1)
	require.Equal(t, "default", signed.GetIdentities()[0].GetName())
	// A template's reads with it: a list keeps its own job's variables;
	// its namespace's services, not another's.
	jwt0 := signed.GetIdentities()[0].GetJWT()
	list := a.readVarsAs(ctx, &messages.IdentityVarReadRequest{Token: jwt0, NodeID: a.Node().GetID(), Read: &messages.VarReadRequest{Namespace: "default", Path: "nomad/jobs", List: true}})
	require.Nil(t, list.GetError())
	require.Len(t, list.GetVars(), 1)
	require.Equal(t, "nomad/jobs/wi", list.GetVars()[0].GetPath())
	require.Nil(t, a.readVarsAs(ctx, &messages.IdentityVarReadRequest{Token: jwt0, NodeID: a.Node().GetID(), Read: &messages.VarReadRequest{Namespace: "default", ListServices: true}}).GetError())
	other := a.readVarsAs(ctx, &messages.IdentityVarReadRequest{Token: jwt0, NodeID: a.Node().GetID(), Read: &messages.VarReadRequest{Namespace: "prod", Service: "db"}})
	require.Equal(t, messages.CodePermissionDenied, other.GetError().ErrorCode())
	forged := a.readVarsAs(ctx, &messages.IdentityVarReadRequest{Token: jwt0 + "x", NodeID: a.Node().GetID(), Read: &messages.VarReadRequest{Namespace: "default", Path: "nomad/jobs/wi"}})
	require.Equal(t, messages.CodePermissionDenied, forged.GetError().ErrorCode())
	require.Empty(t, forged.GetVars())
	elsewhere := a.readVarsAs(ctx, &messages.IdentityVarReadRequest{Token: jwt0, NodeID: "another-node", Read: &messages.VarReadRequest{Namespace: "default", Path: "nomad/jobs/wi"}})
	require.Equal(t, messages.CodePermissionDenied, elsewhere.GetError().ErrorCode(), "an identity is read only by the client of its allocation's node")
	require.Empty(t, elsewhere.GetVars())

	plain := a.readVarsPlain(ctx, &messages.VarReadRequest{Path: "nomad/jobs/wi"})
	require.Equal(t, messages.CodePermissionDenied, plain.GetError().ErrorCode())
	require.Empty(t, plain.GetVars())
	require.Nil(t, a.readVarsPlain(ctx, &messages.VarReadRequest{}).GetError())

	// The JWT verifies with the published keys alone.
	resp, err := http.Get("http://" + a.HTTPAddr() + "/.well-known/jwks.json")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var set jose.JSONWebKeySet
	require.NoError(t, json.Unmarshal(body, &set))
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.EdDSA})
	require.NoError(t, err)
	keys := set.Key(parsed.Headers[0].KeyID)
	require.Len(t, keys, 1)
	var claims map[string]any
	require.NoError(t, parsed.Claims(keys[0].Key, &claims))
	require.Equal(t, "wi", claims["nomad_job_id"])
	require.Equal(t, allocID, claims["nomad_allocation_id"])
	require.Equal(t, "default", claims["nomad_namespace"])
	require.Equal(t, "t", claims["nomad_task"])
	require.Equal(t, "global:default:wi:g:t:default", claims["sub"])

	// Another job's template may not read "nomad/jobs/other".
	thief := rawExecJob("thief", "exec sleep 300")
	thief.TaskGroups[0].Tasks[0].Templates = []*nomad.Template{{
		EmbeddedTmpl: ptr(`{{ with nomadVar "nomad/jobs/other" }}{{ .secret }}{{ end }}`), DestPath: ptr("local/stolen.txt")}}
	_, _, err = c.Jobs().Register(thief, nil)
	require.NoError(t, err)
	var event string
	require.Eventually(t, func() bool {
		allocs, _, err := c.Jobs().Allocations("thief", false, nil)
		if err != nil || len(allocs) == 0 {
			return false
		}
		st := allocs[0].TaskStates["t"]
		if st == nil {
			return false
		}
		for _, ev := range st.Events {
			if strings.Contains(ev.DisplayMessage, "Permission denied") {
				event = ev.DisplayMessage
				return st.State == "pending"
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond, "the thief's task never said its template was refused")
	require.Contains(t, event, "nomad/jobs/other")
	allocs, _, err := c.Jobs().Allocations("thief", false, nil)
	require.NoError(t, err)
	for _, ev := range allocs[0].TaskStates["t"].Events {
		require.NotEqual(t, "Task hook failed", ev.Type, "the task waits, it does not fail: %s", ev.DisplayMessage)
		require.NotEqual(t, "Started", ev.Type)
	}
	_, err = os.Stat(filepath.Join(a.AllocDir(), allocs[0].ID, "t", "local/stolen.txt"))
	require.True(t, os.IsNotExist(err), "the refused template wrote nothing")

	// Stopped, the allocation's identity no longer reads anything.
	_, _, err = c.Jobs().Deregister("wi", false, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		req, _ := http.NewRequest("GET", api+"wi", nil)
		req.Header.Set("X-Nomad-Token", token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusForbidden
	}, 30*time.Second, 20*time.Millisecond, "a stopped allocation's identity still reads")
	require.NotContains(t, logs.String(), token, "the identity is in no log line")
	require.NotContains(t, logs.String(), strings.Split(token, ".")[2], "nor its signature")
	stopped := a.signIdentities(ctx, &messages.SignIdentitiesRequest{AllocID: allocID, NodeID: a.Node().GetID()})
	require.Equal(t, messages.CodeInvalid, stopped.GetError().ErrorCode(), "a terminal allocation gets no identity")
}

// TestWorkloadIdentityFileInIsolatedTask: an isolated exec task with
// identity { file = true } reads its JWT at /secrets/nomad_token (ACLs
// off: identities are signed all the same), and with env = false it has
// no NOMAD_TOKEN.
func TestWorkloadIdentityFileInIsolatedTask(t *testing.T) {
	requireRoot(t)
	a := startAgent(t, testConfig(t, t.TempDir()))
	t.Cleanup(func() { _ = a.Shutdown() })
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	job := nomad.NewServiceJob("wif", "wif", "global", 50)
	task := nomad.NewTask("t", "exec").SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", `cat /secrets/nomad_token > /local/seen.tmp; echo "env=${NOMAD_TOKEN:-none}" >> /local/seen.tmp
mv /local/seen.tmp /local/seen; exec sleep 300`}).
		Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(32)})
	task.KillTimeout = ptr(2 * time.Second)
	task.Identity = &nomad.WorkloadIdentity{File: true}
	job.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(task))
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	allocID := waitAllocStatus(t, c, "wif", "running").ID
	dir := filepath.Join(a.AllocDir(), allocID, "t")
	seen := waitFile(t, filepath.Join(dir, "local/seen"))
	host, err := os.ReadFile(filepath.Join(dir, "secrets/nomad_token"))
	require.NoError(t, err)
	require.True(t, strings.Count(string(host), ".") == 2, "a JWT: %q", host)
	require.Equal(t, string(host)+"env=none\n", seen)
}
