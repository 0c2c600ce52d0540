package server

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// secretHarness is a leading server with node n1 registered with secret
// "s1", whose identity signer and workload reader count their calls.
type secretHarness struct {
	*harness
	signed, read atomic.Int32
}

func newSecretHarness(t *testing.T) *secretHarness {
	sh := &secretHarness{}
	sh.harness = newHarness(t, nil, func(sp *Spec) {
		sp.Identities = func(context.Context, *messages.SignIdentitiesRequest) *messages.SignIdentitiesResponse {
			sh.signed.Add(1)
			return &messages.SignIdentitiesResponse{Identities: []*messages.SignedIdentity{{Task: "t", Name: "default", JWT: "jwt"}}}
		}
		sp.WorkloadVars = func(context.Context, *messages.IdentityVarReadRequest) *messages.VarReadResponse {
			sh.read.Add(1)
			return &messages.VarReadResponse{Vars: []*messages.VarData{{Path: "nomad/jobs/web"}}}
		}
	})
	sh.lead()
	resp := sh.request(&messages.RegisterNodeRequest{Node: secretNode("n1", "s1")}).(*messages.RegisterNodeResponse)
	require.Nil(t, resp.GetError())
	return sh
}

func secretNode(id, secret string) *messages.Node {
	n := testNode(id)
	n.SecretID = secret
	return n
}

// TestSignIdentitiesNeedsNodeSecret: a server signs a node's identities
// only for a request that carries the node's secret; a wrong or missing
// one is refused with permission_denied before the signer runs.
func TestSignIdentitiesNeedsNodeSecret(t *testing.T) {
	h := newSecretHarness(t)
	for _, c := range []struct {
		name, node, secret string
		code               messages.ErrorCode
	}{
		{"wrong secret", "n1", "s2", messages.CodePermissionDenied},
		{"no secret", "n1", "", messages.CodePermissionDenied},
		{"unknown node", "n9", "s1", messages.CodeNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := h.request(&messages.SignIdentitiesRequest{AllocID: "a1", NodeID: c.node, NodeSecretID: c.secret}).(*messages.SignIdentitiesResponse)
			require.Equal(t, c.code, resp.GetError().ErrorCode())
			require.Empty(t, resp.GetIdentities())
		})
	}
	require.Zero(t, h.signed.Load(), "no refused request reached the signer")

	resp := h.request(&messages.SignIdentitiesRequest{AllocID: "a1", NodeID: "n1", NodeSecretID: "s1"}).(*messages.SignIdentitiesResponse)
	require.Nil(t, resp.GetError())
	require.Len(t, resp.GetIdentities(), 1)
	require.Equal(t, int32(1), h.signed.Load())
}

// TestIdentityVarReadNeedsNodeSecret: a template's read with a workload
// identity is answered only for the client of the node it names.
func TestIdentityVarReadNeedsNodeSecret(t *testing.T) {
	h := newSecretHarness(t)
	read := &messages.VarReadRequest{Namespace: "default", Path: "nomad/jobs/web"}
	resp := h.request(&messages.IdentityVarReadRequest{Token: "jwt", Read: read, NodeID: "n1", NodeSecretID: "nope"}).(*messages.VarReadResponse)
	require.Equal(t, messages.CodePermissionDenied, resp.GetError().ErrorCode())
	require.Empty(t, resp.GetVars())
	require.Zero(t, h.read.Load())

	resp = h.request(&messages.IdentityVarReadRequest{Token: "jwt", Read: read, NodeID: "n1", NodeSecretID: "s1"}).(*messages.VarReadResponse)
	require.Nil(t, resp.GetError())
	require.Len(t, resp.GetVars(), 1)
}

// TestHeartbeatNeedsNodeSecret: a heartbeat with a wrong or missing
// secret is refused with permission_denied and commits nothing; the
// node's own is answered with its TTL.
func TestHeartbeatNeedsNodeSecret(t *testing.T) {
	h := newSecretHarness(t)
	before := len(h.raft.log())
	for _, secret := range []string{"s2", ""} {
		hb := h.request(&messages.NodeHeartbeat{NodeID: "n1", NodeSecretID: secret}).(*messages.NodeHeartbeatResponse)
		require.Equal(t, messages.CodePermissionDenied, hb.GetError().ErrorCode(), "secret %q", secret)
		require.Zero(t, hb.GetHeartbeatTTL())
	}
	require.Len(t, h.raft.log(), before, "a refused heartbeat commits nothing")

	hb := h.request(&messages.NodeHeartbeat{NodeID: "n1", NodeSecretID: "s1"}).(*messages.NodeHeartbeatResponse)
	require.Nil(t, hb.GetError())
	require.Positive(t, hb.GetHeartbeatTTL())
}

// TestReRegisterWithOtherSecretRefused: nobody takes a node over by
// registering its ID again with another secret (refused by the leader,
// and by the FSM should such an entry reach it); its own client
// re-registers with the same one.
func TestReRegisterWithOtherSecretRefused(t *testing.T) {
	h := newSecretHarness(t)
	before := len(h.raft.log())
	taken := secretNode("n1", "s2")
	taken.RPCAddr = "10.9.9.9:4647"
	resp := h.request(&messages.RegisterNodeRequest{Node: taken}).(*messages.RegisterNodeResponse)
	require.Equal(t, messages.CodePermissionDenied, resp.GetError().ErrorCode())
	require.Contains(t, resp.GetError().GetMessage(), "node secret ID does not match")
	require.Len(t, h.raft.log(), before, "a refused registration commits nothing")
	n := h.store.Snapshot().NodeByID("n1")
	require.Equal(t, "s1", n.GetSecretID())
	require.Empty(t, n.GetRPCAddr())

	_, _, err := h.raft.Apply(context.Background(), registerNode(h.store.Snapshot(), secretNode("n1", "s2"), h.clock.Now()))
	require.ErrorIs(t, err, state.ErrNodeSecretMismatch)
	require.Equal(t, "s1", h.store.Snapshot().NodeByID("n1").GetSecretID())

	resp = h.request(&messages.RegisterNodeRequest{Node: secretNode("n1", "s1")}).(*messages.RegisterNodeResponse)
	require.Nil(t, resp.GetError())
}

// TestUpdateAllocsNeedsNodeSecret: a client's allocation updates are
// committed only with its node's secret, and only for allocations placed
// on its node.
func TestUpdateAllocsNeedsNodeSecret(t *testing.T) {
	h := newSecretHarness(t)
	require.Nil(t, h.request(&messages.RegisterNodeRequest{Node: secretNode("n2", "t2")}).(*messages.RegisterNodeResponse).GetError())
	h.apply(registerJob(testJob("web", "service")))
	h.apply(&messages.Command{Cmd: &messages.Command_ApplyPlan{ApplyPlan: &messages.ApplyPlan{Place: []*messages.Allocation{
		{ID: "a1", Namespace: "default", JobID: "web", TaskGroup: "g", NodeID: "n1", ClientStatus: "pending", DesiredStatus: "run"},
		{ID: "a2", Namespace: "default", JobID: "web", TaskGroup: "g", NodeID: "n2", ClientStatus: "pending", DesiredStatus: "run"}}}}})
	require.NotNil(t, h.store.Snapshot().AllocByID("a1"))
	before := len(h.raft.log())
	up := func(id string) []*messages.Allocation {
		return []*messages.Allocation{{ID: id, ClientStatus: "running"}}
	}
	for _, c := range []struct {
		name string
		req  *messages.UpdateAllocsRequest
	}{
		{"wrong secret", &messages.UpdateAllocsRequest{NodeID: "n1", NodeSecretID: "t2", Allocs: up("a1")}},
		{"no secret", &messages.UpdateAllocsRequest{NodeID: "n1", Allocs: up("a1")}},
		{"another node's allocation", &messages.UpdateAllocsRequest{NodeID: "n1", NodeSecretID: "s1", Allocs: up("a2")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := h.request(c.req).(*messages.UpdateAllocsResponse)
			require.Equal(t, messages.CodePermissionDenied, resp.GetError().ErrorCode())
		})
	}
	require.Len(t, h.raft.log(), before, "refused updates commit nothing")
	require.Equal(t, "pending", h.store.Snapshot().AllocByID("a2").GetClientStatus())

	resp := h.request(&messages.UpdateAllocsRequest{NodeID: "n1", NodeSecretID: "s1", Allocs: up("a1")}).(*messages.UpdateAllocsResponse)
	require.Nil(t, resp.GetError())
	require.Equal(t, "running", h.store.Snapshot().AllocByID("a1").GetClientStatus())
}

// TestVolumeAndPluginRequestsNeedNodeSecret: a client's volume claim
// (whose answer carries the volume's secrets), its "node detached" and
// its CSI plugin instances are refused without its node's secret and
// commit nothing; with it the plugin instances are committed, without
// the secret in the raft entry.
func TestVolumeAndPluginRequestsNeedNodeSecret(t *testing.T) {
	h := newSecretHarness(t)
	before := len(h.raft.log())
	claim := h.request(&messages.VolumeClaimRequest{VolumeID: "v1", NodeSecretID: "s2",
		Claim: &messages.CSIVolumeClaim{NodeID: "n1", AllocationID: "a1"}}).(*messages.VolumeClaimResponse)
	require.Equal(t, messages.CodePermissionDenied, claim.GetError().ErrorCode())
	require.Nil(t, claim.GetVolume())
	detached := h.request(&messages.VolumeNodeDetachedRequest{VolumeID: "v1", AllocationID: "a1", NodeID: "n1"}).(*messages.VolumeOpResponse)
	require.Equal(t, messages.CodePermissionDenied, detached.GetError().ErrorCode())
	plugins := &messages.UpsertPluginInstances{NodeID: "n1", NodeSecretID: "s2",
		Nodes: []*messages.CSIInfo{{PluginID: "hostpath", Healthy: true}}}
	resp := h.request(plugins).(*messages.UpsertPluginInstancesResponse)
	require.Equal(t, messages.CodePermissionDenied, resp.GetError().ErrorCode())
	require.Len(t, h.raft.log(), before, "refused requests commit nothing")

	plugins.NodeSecretID = "s1"
	resp = h.request(plugins).(*messages.UpsertPluginInstancesResponse)
	require.Nil(t, resp.GetError())
	log := h.raft.log()
	require.Len(t, log, before+1)
	require.Equal(t, "n1", log[before].GetUpsertPluginInstances().GetNodeID())
	require.Empty(t, log[before].GetUpsertPluginInstances().GetNodeSecretID(), "no raft entry holds the secret")
}
