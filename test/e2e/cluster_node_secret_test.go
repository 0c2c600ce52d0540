package e2e

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/messages"
)

// TestClusterNodeSecret: a server and a client, each in its own host. The
// client made a node SecretID on its first start and keeps it in its data
// dir; with it, its task's identity is signed and its template reads the
// job's variable. A program on the plain RPC transport that forges the
// client's SignIdentitiesRequest for the real node and allocation, with
// no secret or a wrong one, or re-registers the node with another secret
// (to take it over), is refused with permission_denied, and nothing
// changes; the node API and the event stream never show the secret, nor
// do the agents' logs.
func TestClusterNodeSecret(t *testing.T) {
	dataRoot := t.TempDir()
	tc := startAgents(t, dataRoot, 1, 1)
	srv := tc.server()
	b, err := os.ReadFile(filepath.Join(dataRoot, "client0", "client", "node-secret-id"))
	require.NoError(t, err)
	secret := strings.TrimSpace(string(b))
	require.Len(t, secret, 36, "a UUID")
	nodeID := tc.nodeIDs(t)["client0"]
	require.NotEqual(t, nodeID, secret)

	httpDo := func(method, path, body string) string {
		t.Helper()
		req, err := http.NewRequest(method, srv.HTTPAddr()+path, strings.NewReader(body))
		require.NoError(t, err)
		resp, err := (&http.Client{Timeout: requestTimeout}).Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s %s: %s", method, path, out)
		return string(out)
	}
	httpDo(http.MethodPut, "/v1/var/nomad/jobs/ns", `{"Items":{"k":"node-secret-var"}}`)
	job := nomad.NewServiceJob("ns", "ns", "global", 50)
	task := nomad.NewTask("t", "exec").SetConfig("command", "/bin/sleep").SetConfig("args", []string{"300"}).
		Require(&nomad.Resources{CPU: ptrTo(100), MemoryMB: ptrTo(32)})
	task.KillTimeout = ptrTo(2 * time.Second)
	task.Templates = []*nomad.Template{{EmbeddedTmpl: ptrTo(`{{ with nomadVar "nomad/jobs/ns" }}{{ .k }}{{ end }}`),
		DestPath: ptrTo("local/own.txt")}}
	job.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(task))
	nc, err := nomad.NewClient(&nomad.Config{Address: srv.HTTPAddr()})
	require.NoError(t, err)
	_, _, err = nc.Jobs().Register(job, nil)
	require.NoError(t, err)
	allocs := tc.waitRunning(t, "ns", 1, settleTimeout, onEachNode(nodeID))
	own := filepath.Join(dataRoot, "client0", "alloc", allocs[0].ID, "t", "local", "own.txt")
	tc.eventually(t, settleTimeout, "the template read with the client's identity", func() (bool, string) {
		b, err := os.ReadFile(own)
		return err == nil && string(b) == "node-secret-var", string(b)
	})

	// The forger: this test process on the plain transport, where the
	// server can dial its replies back.
	forger, err := remote.NewClientConfig(remote.Config{BindAddr: tc.c.Gateway() + ":0"})
	require.NoError(t, err)
	t.Cleanup(forger.Close)
	rpc := srv.Host.AddrPort(rpcPort)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, guess := range []string{"", nodeID, "00000000-0000-0000-0000-000000000000"} {
		_, err = remote.Request[*messages.SignIdentitiesResponse](ctx, forger.Root(), rpc, "server",
			&messages.SignIdentitiesRequest{AllocID: allocs[0].ID, NodeID: nodeID, NodeSecretID: guess})
		requireDenied(t, err, "a forged SignIdentitiesRequest with secret "+guess)
	}
	before, _, err := nc.Nodes().Info(nodeID, nil)
	require.NoError(t, err)
	taken := &messages.Node{ID: nodeID, SecretID: "00000000-0000-0000-0000-000000000000", Name: "forged",
		Datacenter: "dc1", Region: "global", Status: "ready", RPCAddr: tc.c.Gateway() + ":1"}
	_, err = remote.Request[*messages.RegisterNodeResponse](ctx, forger.Root(), rpc, "server", &messages.RegisterNodeRequest{Node: taken})
	requireDenied(t, err, "a forged re-registration of the node")
	after, _, err := nc.Nodes().Info(nodeID, nil)
	require.NoError(t, err)
	require.Equal(t, before.ModifyIndex, after.ModifyIndex, "the forged registration changed nothing")
	require.Equal(t, "client0", after.Name)
	require.Equal(t, "ready", after.Status)

	// With the node's secret the same request is answered: the secret is
	// what the server checks.
	signed, err := remote.Request[*messages.SignIdentitiesResponse](ctx, forger.Root(), rpc, "server",
		&messages.SignIdentitiesRequest{AllocID: allocs[0].ID, NodeID: nodeID, NodeSecretID: secret})
	require.NoError(t, err)
	require.Len(t, signed.GetIdentities(), 1)

	// No API output of the node shows its secret.
	for _, path := range []string{"/v1/node/" + nodeID, "/v1/nodes", "/v1/nodes?resources=true"} {
		out := httpDo(http.MethodGet, path, "")
		require.Contains(t, out, nodeID, path)
		require.NotContains(t, out, secret, "%s shows the node's secret", path)
	}
	// The event stream's Node events (from the start: the registration).
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.HTTPAddr()+"/v1/event/stream?topic=Node&index=0", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	seen := false
	for !seen && sc.Scan() {
		line := sc.Text()
		require.NotContains(t, line, secret, "a Node event shows the node's secret")
		seen = strings.Contains(line, nodeID) && strings.Contains(line, `"Node"`)
	}
	require.True(t, seen, "no Node event of the node: %v", sc.Err())
	requireNoSecrets(t, []*agentProc{srv, tc.clients[0]}, secret)
}
