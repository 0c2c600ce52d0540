package volume

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// topologyRPC is the harness's controller with a plugin that makes each
// volume accessible from the first topology its request requires (as the
// hostpath plugin does), or, without a requirement, from none.
type topologyRPC struct {
	ControllerRPC
	asked []*messages.CSITopologyRequest
}

func (r *topologyRPC) Run(ctx context.Context, nodeID string, req *messages.ControllerRequest) (*messages.ControllerResponse, error) {
	resp, err := r.ControllerRPC.Run(ctx, nodeID, req)
	if err != nil || req.GetOp().GetKind() != opCreateVolume || resp.GetVolume() == nil {
		return resp, err
	}
	r.asked = append(r.asked, req.GetVolume().GetRequestedTopologies())
	if req := req.GetVolume().GetRequestedTopologies().GetRequired(); len(req) > 0 {
		resp.Volume.Topologies = []*messages.CSITopology{proto.Clone(req[0]).(*messages.CSITopology)}
	}
	return resp, nil
}

// TestCreateStoresAccessibleTopologies: a created volume's Topologies are
// the accessible topologies CreateVolume returned (not the request), kept
// through raft with the request itself; a volume the plugin gave none is
// accessible everywhere. A registered volume keeps its Topologies, and an
// update that names none keeps the stored ones.
func TestCreateStoresAccessibleTopologies(t *testing.T) {
	zone := func(z string) *messages.CSITopology {
		return &messages.CSITopology{Segments: map[string]string{"zone": z}}
	}
	cases := []struct {
		name    string
		request *messages.CSITopologyRequest
		want    []*messages.CSITopology
	}{
		{"required", &messages.CSITopologyRequest{Required: []*messages.CSITopology{zone("b"), zone("c")},
			Preferred: []*messages.CSITopology{zone("c")}}, []*messages.CSITopology{zone("b")}},
		{"no request", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			rpc := &topologyRPC{ControllerRPC: h.rpc}
			h.spec.Controllers = rpc
			h.cluster()
			h.start()
			spec := testVolume("new", true)
			spec.RequestedTopologies = c.request
			r := h.op(&messages.VolumeOpRequest{Op: opRequestCreate, VolumeID: "new", Volume: spec})
			require.Nil(t, r.GetError())
			require.Len(t, rpc.asked, 1)
			require.True(t, proto.Equal(c.request, rpc.asked[0]), "CreateVolume is asked for %v, got %v", c.request, rpc.asked[0])
			for _, v := range []*messages.CSIVolume{r.GetVolume(), h.stored("new")} {
				require.True(t, proto.Equal(&messages.CSIVolume{Topologies: c.want}, &messages.CSIVolume{Topologies: v.GetTopologies()}),
					"topologies %v", v.GetTopologies())
				require.True(t, proto.Equal(c.request, v.GetRequestedTopologies()), "the request is kept: %v", v.GetRequestedTopologies())
			}
		})
	}

	t.Run("register", func(t *testing.T) {
		h := newHarness(t)
		vol := testVolume("reg", true)
		vol.Topologies = []*messages.CSITopology{zone("a"), zone("b")}
		h.apply(&messages.Command{Cmd: &messages.Command_RegisterVolume{RegisterVolume: &messages.RegisterVolume{Volume: vol}}})
		got := h.stored("reg")
		require.Len(t, got.GetTopologies(), 2)
		require.Equal(t, "b", got.GetTopologies()[1].GetSegments()["zone"])
		update := testVolume("reg", true)
		update.Context = map[string]string{"k": "v"}
		h.apply(&messages.Command{Cmd: &messages.Command_RegisterVolume{RegisterVolume: &messages.RegisterVolume{Volume: update}}})
		require.Len(t, h.stored("reg").GetTopologies(), 2, "an update without topologies keeps the stored ones")
	})
}
