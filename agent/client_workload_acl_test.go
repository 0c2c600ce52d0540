//go:build linux

package agent

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// TestClientAgentChecksWorkloadIdentity: a client-only agent has no
// keyring, so a request to its own API whose token is a workload identity
// JWT is checked by a server over the RPC transport. A real identity of a
// running allocation is accepted with Nomad's implicit workload rules
// (which do not cover its allocation's stats: "Permission denied", where
// the client used to answer "ACL token not found"); a
// forged one is refused as invalid, and once the allocation stops its
// identity is refused as not running.
func TestClientAgentChecksWorkloadIdentity(t *testing.T) {
	skipTwoAgentsUnderRace(t)
	srv := startRegionServer(t, "global", func(c *Config) { c.ACLEnabled = true })
	sc, err := nomad.NewClient(&nomad.Config{Address: "http://" + srv.HTTPAddr()})
	require.NoError(t, err)
	root, _, err := sc.ACLTokens().Bootstrap(nil)
	require.NoError(t, err)
	sc.SetSecretID(root.SecretID)

	cfg := testConfig(t, t.TempDir())
	cfg.Server, cfg.Client, cfg.ACLEnabled, cfg.RawExecEnabled = false, true, true, true
	cfg.NodeName, cfg.BindAddr, cfg.RPCPort = "wi-client", "127.0.0.1", freePort(t)
	cfg.Servers = []string{srv.RPCAddr()}
	client, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, client.Start())
	t.Cleanup(func() { _ = client.Shutdown() })

	_, _, err = sc.Jobs().Register(rawExecJob("wic", "exec sleep 300"), nil)
	require.NoError(t, err)
	alloc := waitAllocStatus(t, sc, "wic", "running")
	signed := srv.signIdentities(context.Background(), &messages.SignIdentitiesRequest{AllocID: alloc.ID, NodeID: alloc.NodeID})
	require.Nil(t, signed.GetError())
	require.NotEmpty(t, signed.GetIdentities())
	jwt := signed.GetIdentities()[0].GetJWT()

	get := func(path, token string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, "http://"+client.HTTPAddr()+path, nil)
		require.NoError(t, err)
		req.Header.Set("X-Nomad-Token", token)
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	stats := "/v1/client/allocation/" + alloc.ID + "/stats"
	code, body := get(stats, jwt)
	require.Equal(t, http.StatusForbidden, code)
	require.Equal(t, "Permission denied", body, "the identity resolved, and its rules do not cover stats")
	code, _ = get(stats, root.SecretID)
	require.Equal(t, http.StatusOK, code, "the route is served here")
	code, body = get(stats, jwt+"x")
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, body, "invalid workload identity")

	_, _, err = sc.Jobs().Deregister("wic", false, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, body := get(stats, jwt)
		return strings.Contains(body, "allocation is not running")
	}, 30*time.Second, 50*time.Millisecond, "the identity of a stopped allocation is still accepted")
}
