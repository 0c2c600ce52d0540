package server

import (
	"context"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// TestClients: the local node's client is this process's client actor;
// another node's is the client actor at its RPC address; a node without
// one has none.
func TestClients(t *testing.T) {
	local := actor.NewPID("nonhost", ClientActorName)
	cases := []struct {
		name      string
		clients   Clients
		node      *messages.Node
		want      *actor.PID
		wantLocal bool
	}{
		{"local node", Clients{LocalNodeID: "n1", LocalPID: local}, &messages.Node{ID: "n1", RPCAddr: "10.0.0.1:4647"}, local, true},
		{"remote node", Clients{LocalNodeID: "n1", LocalPID: local}, &messages.Node{ID: "n2", RPCAddr: "10.0.0.2:4647"},
			actor.NewPID("10.0.0.2:4647", "client"), false},
		{"no address", Clients{LocalNodeID: "n1", LocalPID: local}, &messages.Node{ID: "n2"}, nil, false},
		{"no local client", Clients{}, &messages.Node{ID: ""}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pid, isLocal := c.clients.ClientPID(c.node)
			require.Equal(t, c.want.String(), pid.String())
			require.Equal(t, c.wantLocal, isLocal)
		})
	}
}

// nodesView is a StateView holding only nodes (the rest is unused here).
type nodesView struct {
	StateView
	nodes map[string]*messages.Node
	vols  map[string]*messages.CSIVolume
	plugs map[string]*messages.CSIPlugin
}

func (v *nodesView) NodeByID(id string) *messages.Node                   { return v.nodes[id] }
func (v *nodesView) CSIVolumeAnyNamespace(id string) *messages.CSIVolume { return v.vols[id] }
func (v *nodesView) CSIPluginByID(id string) *messages.CSIPlugin         { return v.plugs[id] }

// TestControllerRPC routes a controller request to the client actor of
// the instance's node: the local one answers through the actor system;
// an unknown node or one without a client is an error (the controller
// actor then tries another instance).
func TestControllerRPC(t *testing.T) {
	sys := actor.NewActorSystem()
	defer sys.Shutdown()
	client, err := sys.Root.SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if req, ok := c.Message().(*messages.ControllerRequest); ok {
			if req.GetOp().GetVolumeID() == "odd" {
				c.Respond(&messages.VolumeOpResponse{})
				return
			}
			c.Respond(&messages.ControllerResponse{PublishContext: map[string]string{"dev": "/dev/xvdb"}})
		}
	}), ClientActorName)
	require.NoError(t, err)
	view := &nodesView{nodes: map[string]*messages.Node{"n1": {ID: "n1"}, "n2": {ID: "n2"}}}
	rpc := &controllerRPC{state: func() StateView { return view }, clients: Clients{LocalNodeID: "n1", LocalPID: client}, root: sys.Root}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := func(vol string) *messages.ControllerRequest {
		return &messages.ControllerRequest{Op: &messages.ControllerOp{Kind: string(messages.ControllerPublish), VolumeID: vol}}
	}

	resp, err := rpc.Run(ctx, "n1", req("v1"))
	require.NoError(t, err)
	require.Equal(t, "/dev/xvdb", resp.GetPublishContext()["dev"])

	_, err = rpc.Run(ctx, "n1", req("odd"))
	require.ErrorIs(t, err, errUnexpectedReply)
	_, err = rpc.Run(ctx, "nope", req("v1"))
	require.ErrorIs(t, err, errUnknownNode)
	_, err = rpc.Run(ctx, "n2", req("v1"))
	require.ErrorIs(t, err, errNoClient)
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelExpired()
	_, err = rpc.Run(expired, "n1", req("v1"))
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// TestFillExternalNodeID: a claim learns its node's ID as the volume's
// plugin names it, unless it has one or the plugin has no instance there.
func TestFillExternalNodeID(t *testing.T) {
	view := &nodesView{
		vols: map[string]*messages.CSIVolume{"v1": {ID: "v1", PluginID: "ebs"}},
		plugs: map[string]*messages.CSIPlugin{"ebs": {ID: "ebs", Nodes: map[string]*messages.CSIInfo{
			"n1": {NodeInfo: &messages.CSINodeInfo{ID: "i-0abc"}}}}},
	}
	cases := []struct{ name, vol, node, has, want string }{
		{"from the plugin", "v1", "n1", "", "i-0abc"},
		{"kept", "v1", "n1", "given", "given"},
		{"no instance on the node", "v1", "n2", "", ""},
		{"unknown volume", "v9", "n1", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &messages.VolumeClaimRequest{VolumeID: c.vol, Claim: &messages.CSIVolumeClaim{NodeID: c.node, ExternalNodeID: c.has}}
			fillExternalNodeID(view, m)
			require.Equal(t, c.want, m.GetClaim().GetExternalNodeID())
		})
	}
}
