package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/clustertest"
	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/cluster/tlsutil"
	"github.com/troupe-dev/troupe/messages"
)

// TestClusterRPCGuard: a server and a client with mutual TLS on every
// link and ACLs on. The real client registers and heartbeats through the
// server's per-message guard; a program holding a client certificate that
// forges a server's message (a raft write that would mint a management
// token) is refused with permission_denied and nothing changes; a user's
// message over RPC is checked by its ACL token, with the HTTP API's
// policies: refused without a token or with a denied one, answered with
// one that allows it. A server certificate of another region may pull
// ACLs but not write raft.
func TestClusterRPCGuard(t *testing.T) {
	dataRoot := t.TempDir()
	ca, err := tlsutil.NewCA(tlsutil.CAOptions{})
	require.NoError(t, err)
	tc := &tlsCluster{ca: ca, certDir: t.TempDir()}
	tc.cli = tc.bundle(t, "cli", tlsutil.RoleCLI, "global")
	c := clustertest.New(t, 2, logDirOption(t)...)
	tc.testCluster = &testCluster{c: c}
	h := c.Hosts()
	start := func(host *clustertest.Host, name, role string, args []string) *agentProc {
		a := startAgent(t, host, name, dataRoot, append(args, tlsArgs(tc.bundle(t, name, role, "global"))...))
		a.API, err = api.NewClient(&api.Config{Address: "https://" + host.AddrPort(httpPort), HTTPClient: tc.httpsClient(t, role)})
		require.NoError(t, err)
		return a
	}
	srv := start(h[0], "server0", tlsutil.RoleServer, []string{"agent", "-server", "-bootstrap-expect", "1", "-acl-enabled"})
	cli := start(h[1], "client0", tlsutil.RoleClient, []string{"agent", "-client", "-servers", h[0].Addr, "-acl-enabled"})
	tc.servers, tc.clients = []*agentProc{srv}, []*agentProc{cli}
	tc.eventually(t, formTimeout, "a leader", func() (bool, string) {
		l, err := srv.API.Status().Leader()
		return err == nil && l != "", fmt.Sprint(err)
	})
	boot, err := srv.API.ACL().Bootstrap("")
	require.NoError(t, err)
	srv.API, err = api.NewClient(&api.Config{Address: "https://" + h[0].AddrPort(httpPort),
		HTTPClient: tc.httpsClient(t, tlsutil.RoleServer), Token: boot.SecretID})
	require.NoError(t, err)
	tc.eventually(t, formTimeout, "the client registered through the guard", func() (bool, string) { return tc.formed(1) })

	acls := srv.API.ACL()
	require.NoError(t, acls.ApplyPolicy(&api.ACLPolicy{Name: "agent-reader", Rules: `agent { policy = "read" }`}))
	require.NoError(t, acls.ApplyPolicy(&api.ACLPolicy{Name: "jobs", Rules: `namespace "default" { policy = "read" }`}))
	reader, err := acls.CreateToken(&api.ACLToken{Name: "r", Type: "client", Policies: []string{"agent-reader"}})
	require.NoError(t, err)
	denied, err := acls.CreateToken(&api.ACLToken{Name: "d", Type: "client", Policies: []string{"jobs"}})
	require.NoError(t, err)
	before, err := acls.Tokens()
	require.NoError(t, err)

	// The forger: this test process with a client certificate, listening
	// where the server can dial its replies back.
	forgedBundle := tc.bundle(t, "forger", tlsutil.RoleClient, "global")
	loader, err := tlsutil.NewLoader(forgedBundle.Config(true))
	require.NoError(t, err)
	names := loader.PeerNames("global", tlsutil.RoleServer)
	forger, err := remote.NewClientConfig(remote.Config{BindAddr: c.Gateway() + ":0",
		ListenTLS: loader.PeerListenConfig(names), DialTLS: loader.PeerDialConfig(names)})
	require.NoError(t, err)
	t.Cleanup(forger.Close)
	rpc := h[0].AddrPort(rpcPort)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	mint := &messages.ApplyRequest{Command: &messages.Command{Cmd: &messages.Command_UpsertACLTokens{UpsertACLTokens: &messages.UpsertACLTokens{
		Tokens: []*messages.ACLToken{{AccessorID: "6d1c2f0a-9b8e-4c7d-a6f5-e4d3c2b1a090", Name: "forged", Type: "management"}}}}}}
	_, err = remote.Request[*messages.ApplyResponse](ctx, forger.Root(), rpc, "server", mint)
	requireDenied(t, err, "a client certificate forging a raft write")
	after, err := acls.Tokens()
	require.NoError(t, err)
	require.Len(t, after, len(before), "the forged write changed nothing")

	// A server certificate of another region (which federation lets reach
	// this server's RPC) may open tunnels and pull ACLs, not write raft.
	foreign := otherRegionServer(t, tc, c)
	_, err = remote.Request[*messages.ApplyResponse](ctx, foreign.Root(), rpc, "server", mint)
	requireDenied(t, err, "another region's server certificate forging a raft write")
	after, err = acls.Tokens()
	require.NoError(t, err)
	require.Len(t, after, len(before), "the other region's forged write changed nothing")
	_, err = remote.Request[*messages.ReplicateACLsResponse](ctx, foreign.Root(), rpc, "agent", &messages.ReplicateACLs{ReplicationToken: boot.SecretID})
	require.NoError(t, err, "another region's server pulls ACLs with a replication token")

	_, err = remote.Request[*messages.ActorTreeResponse](ctx, forger.Root(), rpc, "agent", &messages.GetActorTree{})
	requireDenied(t, err, "a user message without a token")
	_, err = remote.Request[*messages.ActorTreeResponse](remote.WithToken(ctx, denied.SecretID), forger.Root(), rpc, "agent", &messages.GetActorTree{})
	requireDenied(t, err, "a user message with a denied token")
	tree, err := remote.Request[*messages.ActorTreeResponse](remote.WithToken(ctx, reader.SecretID), forger.Root(), rpc, "agent", &messages.GetActorTree{})
	require.NoError(t, err, "a user message its token allows")
	require.NotEmpty(t, tree.GetActors())
	_, err = remote.Request[*messages.ApplyResponse](remote.WithToken(ctx, reader.SecretID), forger.Root(), rpc, "server", mint)
	requireDenied(t, err, "a raft write with a non-management token")

	// The real client still heartbeats: its node stays ready.
	n := tc.nodeStub(t, "client0")
	require.Equal(t, "ready", n.Status)
	requireNoSecrets(t, []*agentProc{srv, cli}, boot.SecretID, reader.SecretID, denied.SecretID)
}

// otherRegionServer is this test process holding a server certificate of
// region "elsewhere", listening where the server can dial its replies.
func otherRegionServer(t *testing.T, tc *tlsCluster, c *clustertest.Cluster) *remote.Client {
	t.Helper()
	b := tc.bundle(t, "elsewhere", tlsutil.RoleServer, "elsewhere")
	loader, err := tlsutil.NewLoader(b.Config(true))
	require.NoError(t, err)
	names := loader.PeerNames(tlsutil.AnyRegion, tlsutil.RoleServer)
	tr, err := remote.NewClientConfig(remote.Config{BindAddr: c.Gateway() + ":0",
		ListenTLS: loader.PeerListenConfig(names), DialTLS: loader.PeerDialConfig(names)})
	require.NoError(t, err)
	t.Cleanup(tr.Close)
	return tr
}

func requireDenied(t *testing.T, err error, what string) {
	t.Helper()
	var re *remote.RemoteError
	require.ErrorAs(t, err, &re, what)
	require.True(t, re.Denied(), "%s: %v", what, err)
}
