package e2e

import (
	"bytes"
	"encoding/json"
	"io"
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
)

// TestClusterWorkloadIdentity: on 3 servers and a client, each in its own
// host, a task's identity is signed by a server over the RPC transport;
// the task has it in NOMAD_TOKEN and /secrets/nomad_token, its template
// renders its job's variable (written through a follower) with it, and
// the JWT verifies against the /.well-known/jwks.json of every server
// (each derives the same keys from the replicated keyring).
func TestClusterWorkloadIdentity(t *testing.T) {
	dataRoot := t.TempDir()
	tc := startAgents(t, dataRoot, 3, 1)
	follower := tc.follower(t)

	put := func(path string, body any) {
		t.Helper()
		b, err := json.Marshal(body)
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPut, follower.HTTPAddr()+path, bytes.NewReader(b))
		require.NoError(t, err)
		resp, err := (&http.Client{Timeout: requestTimeout}).Do(req)
		require.NoError(t, err)
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "PUT %s: %s", path, out)
	}
	put("/v1/var/nomad/jobs/wic", map[string]any{"Items": map[string]string{"k": "cluster-secret"}})

	job := nomad.NewServiceJob("wic", "wic", "global", 50)
	task := nomad.NewTask("t", "exec").SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", `printf %s "$NOMAD_TOKEN" > /local/env.tmp; cat /secrets/nomad_token > /local/file.tmp
mv /local/env.tmp /local/env; mv /local/file.tmp /local/file; exec sleep 300`}).
		Require(&nomad.Resources{CPU: ptrTo(100), MemoryMB: ptrTo(32)})
	task.KillTimeout = ptrTo(2 * time.Second)
	task.Identity = &nomad.WorkloadIdentity{Env: true, File: true}
	task.Templates = []*nomad.Template{{EmbeddedTmpl: ptrTo(`{{ with nomadVar "nomad/jobs/wic" }}{{ .k }}{{ end }}`),
		DestPath: ptrTo("local/own.txt")}}
	job.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(task))
	put("/v1/jobs", map[string]any{"Job": job})

	allocs := tc.waitRunning(t, "wic", 1, settleTimeout, onEachNode(tc.nodeIDs(t)["client0"]))
	dir := filepath.Join(dataRoot, "client0", "alloc", allocs[0].ID, "t", "local")
	read := func(name string) string {
		var b []byte
		tc.eventually(t, settleTimeout, "task file "+name, func() (bool, string) {
			var err error
			b, err = os.ReadFile(filepath.Join(dir, name))
			return err == nil && len(b) > 0, "not written"
		})
		return string(b)
	}
	token := read("env")
	require.Equal(t, token, read("file"), "NOMAD_TOKEN and /secrets/nomad_token are one identity")
	require.Equal(t, "cluster-secret", read("own.txt"))

	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.EdDSA})
	require.NoError(t, err)
	for _, s := range tc.servers {
		resp, err := (&http.Client{Timeout: requestTimeout}).Get(s.HTTPAddr() + "/.well-known/jwks.json")
		require.NoError(t, err)
		var set jose.JSONWebKeySet
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&set))
		resp.Body.Close()
		keys := set.Key(parsed.Headers[0].KeyID)
		require.Len(t, keys, 1, "%s publishes the signing key", s.Name)
		var claims map[string]any
		require.NoError(t, parsed.Claims(keys[0].Key, &claims), "the JWT verifies with %s's keys", s.Name)
		require.Equal(t, allocs[0].ID, claims["nomad_allocation_id"])
		require.True(t, strings.HasSuffix(claims["sub"].(string), ":default:wic:g:t:default"), "sub %v", claims["sub"])
	}
}
