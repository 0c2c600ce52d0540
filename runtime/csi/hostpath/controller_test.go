package hostpath

import (
	"os"
	"path/filepath"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
)

func TestCreateVolumeIsIdempotentAndPersistent(t *testing.T) {
	e := start(t, Config{})
	req := &csipb.CreateVolumeRequest{Name: "v1", VolumeCapabilities: []*csipb.VolumeCapability{rw},
		CapacityRange: &csipb.CapacityRange{RequiredBytes: 100}}
	first, err := e.ctrl.CreateVolume(e.ctx, req)
	require.NoError(t, err)
	again, err := e.ctrl.CreateVolume(e.ctx, req)
	require.NoError(t, err)
	require.Equal(t, first.GetVolume().GetCapacityBytes(), again.GetVolume().GetCapacityBytes())

	req.CapacityRange = &csipb.CapacityRange{RequiredBytes: 200}
	_, err = e.ctrl.CreateVolume(e.ctx, req)
	require.Equal(t, codes.AlreadyExists, code(err))

	// A new plugin on the same root remembers the capacity.
	p2, err := New(Config{Root: e.cfg.Root, NodeID: "node-1"})
	require.NoError(t, err)
	v, ok, err := p2.volume("v1")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(100), v.CapacityBytes)
}

func TestCreateVolumeArguments(t *testing.T) {
	e := start(t, Config{})
	noMode := &csipb.VolumeCapability{AccessType: rw.AccessType}
	cases := []struct {
		name string
		req  *csipb.CreateVolumeRequest
		want codes.Code
	}{
		{"no name", &csipb.CreateVolumeRequest{VolumeCapabilities: []*csipb.VolumeCapability{rw}}, codes.InvalidArgument},
		{"dot name", &csipb.CreateVolumeRequest{Name: ".meta", VolumeCapabilities: []*csipb.VolumeCapability{rw}}, codes.InvalidArgument},
		{"slash name", &csipb.CreateVolumeRequest{Name: "a/b", VolumeCapabilities: []*csipb.VolumeCapability{rw}}, codes.InvalidArgument},
		{"no caps", &csipb.CreateVolumeRequest{Name: "v"}, codes.InvalidArgument},
		{"no access mode", &csipb.CreateVolumeRequest{Name: "v", VolumeCapabilities: []*csipb.VolumeCapability{noMode}}, codes.InvalidArgument},
		{"range inverted", &csipb.CreateVolumeRequest{Name: "v", VolumeCapabilities: []*csipb.VolumeCapability{rw},
			CapacityRange: &csipb.CapacityRange{RequiredBytes: 10, LimitBytes: 5}}, codes.OutOfRange},
		{"clone", &csipb.CreateVolumeRequest{Name: "v", VolumeCapabilities: []*csipb.VolumeCapability{rw},
			VolumeContentSource: &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Volume{
				Volume: &csipb.VolumeContentSource_VolumeSource{VolumeId: "x"}}}}, codes.InvalidArgument},
		{"default capacity", &csipb.CreateVolumeRequest{Name: "v", VolumeCapabilities: []*csipb.VolumeCapability{rw}}, codes.OK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := e.ctrl.CreateVolume(e.ctx, tc.req)
			require.Equal(t, tc.want, code(err), "%v", err)
			if tc.want == codes.OK {
				require.Equal(t, DefaultCapacity, resp.GetVolume().GetCapacityBytes())
			}
		})
	}
}

func TestControllerPublishRules(t *testing.T) {
	e := start(t, Config{Nodes: []string{"n1", "n2"}})
	e.create("v1")
	require.Equal(t, codes.NotFound, code(e.cpublish("nope", "n1")))
	require.Equal(t, codes.NotFound, code(e.cpublish("v1", "n3")), "unknown node")
	require.NoError(t, e.cpublish("v1", "n1"))
	require.NoError(t, e.cpublish("v1", "n1"), "idempotent")
	require.Equal(t, codes.FailedPrecondition, code(e.cpublish("v1", "n2")), "single-node volume elsewhere")
	_, err := e.ctrl.ControllerPublishVolume(e.ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: "v1",
		NodeId: "n1", VolumeCapability: rw, Readonly: true})
	require.Equal(t, codes.AlreadyExists, code(err))

	_, err = e.ctrl.DeleteVolume(e.ctx, &csipb.DeleteVolumeRequest{VolumeId: "v1"})
	require.Equal(t, codes.FailedPrecondition, code(err), "attached")
	require.NoError(t, e.cunpublish("v1", "n1"))
	require.NoError(t, e.cunpublish("v1", "n1"), "not attached any more: success")
	require.Equal(t, codes.NotFound, code(e.cunpublish("nope", "n1")))
	require.Equal(t, codes.InvalidArgument, code(e.cunpublish("", "n1")))

	e.create("shared")
	multi := mountCap(csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER)
	for _, n := range []string{"n1", "n2"} {
		_, err := e.ctrl.ControllerPublishVolume(e.ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: "shared",
			NodeId: n, VolumeCapability: multi})
		require.NoError(t, err, n)
	}
	require.NoError(t, e.cunpublish("shared", ""), "empty node: every node")
	_, err = e.ctrl.DeleteVolume(e.ctx, &csipb.DeleteVolumeRequest{VolumeId: "shared"})
	require.NoError(t, err)
}

func TestUnpublishUnknownOK(t *testing.T) {
	e := start(t, Config{UnpublishUnknownOK: true})
	require.NoError(t, e.cunpublish("nope", "n1"))
	require.Equal(t, codes.InvalidArgument, code(e.cunpublish("", "n1")))
}

func TestValidateAndExpand(t *testing.T) {
	e := start(t, Config{})
	e.create("v1")
	resp, err := e.ctrl.ValidateVolumeCapabilities(e.ctx, &csipb.ValidateVolumeCapabilitiesRequest{
		VolumeId: "v1", VolumeCapabilities: []*csipb.VolumeCapability{rw}})
	require.NoError(t, err)
	require.NotNil(t, resp.GetConfirmed())
	block := &csipb.VolumeCapability{AccessMode: rw.AccessMode,
		AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}}}
	resp, err = e.ctrl.ValidateVolumeCapabilities(e.ctx, &csipb.ValidateVolumeCapabilitiesRequest{
		VolumeId: "v1", VolumeCapabilities: []*csipb.VolumeCapability{block}})
	require.NoError(t, err)
	require.Nil(t, resp.GetConfirmed())
	require.NotEmpty(t, resp.GetMessage())
	_, err = e.ctrl.ValidateVolumeCapabilities(e.ctx, &csipb.ValidateVolumeCapabilitiesRequest{
		VolumeId: "nope", VolumeCapabilities: []*csipb.VolumeCapability{rw}})
	require.Equal(t, codes.NotFound, code(err))

	_, err = e.ctrl.ControllerExpandVolume(e.ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: "v1"})
	require.Equal(t, codes.InvalidArgument, code(err))
	ex, err := e.ctrl.ControllerExpandVolume(e.ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: "v1",
		CapacityRange: &csipb.CapacityRange{RequiredBytes: 2 * DefaultCapacity}})
	require.NoError(t, err)
	require.Equal(t, 2*DefaultCapacity, ex.GetCapacityBytes())
}

func TestHandMadeDirectoryIsAVolume(t *testing.T) {
	e := start(t, Config{})
	require.NoError(t, os.MkdirAll(filepath.Join(e.cfg.Root, "manual"), 0o755))
	require.NoError(t, e.cpublish("manual", "node-1"))
	require.NoError(t, e.cunpublish("manual", "node-1"))
}

func TestSnapshotConflicts(t *testing.T) {
	e := start(t, Config{})
	e.create("a")
	e.create("b")
	_, err := e.ctrl.CreateSnapshot(e.ctx, &csipb.CreateSnapshotRequest{Name: "s", SourceVolumeId: "a"})
	require.NoError(t, err)
	_, err = e.ctrl.CreateSnapshot(e.ctx, &csipb.CreateSnapshotRequest{Name: "s", SourceVolumeId: "a"})
	require.NoError(t, err, "same name, same source")
	_, err = e.ctrl.CreateSnapshot(e.ctx, &csipb.CreateSnapshotRequest{Name: "s", SourceVolumeId: "b"})
	require.Equal(t, codes.AlreadyExists, code(err))
	_, err = e.ctrl.CreateSnapshot(e.ctx, &csipb.CreateSnapshotRequest{Name: "t", SourceVolumeId: "nope"})
	require.Equal(t, codes.NotFound, code(err))
	_, err = e.ctrl.CreateSnapshot(e.ctx, &csipb.CreateSnapshotRequest{SourceVolumeId: "a"})
	require.Equal(t, codes.InvalidArgument, code(err))
	_, err = e.ctrl.DeleteSnapshot(e.ctx, &csipb.DeleteSnapshotRequest{})
	require.Equal(t, codes.InvalidArgument, code(err))
}

func TestModesServeTheirServices(t *testing.T) {
	ctrl := start(t, Config{Mode: ModeController})
	_, err := ctrl.node.NodeGetInfo(ctrl.ctx, &csipb.NodeGetInfoRequest{})
	require.Equal(t, codes.Unimplemented, code(err))
	_, err = ctrl.ctrl.ControllerGetCapabilities(ctrl.ctx, &csipb.ControllerGetCapabilitiesRequest{})
	require.NoError(t, err)

	node := start(t, Config{Mode: ModeNode})
	_, err = node.ctrl.ControllerGetCapabilities(node.ctx, &csipb.ControllerGetCapabilitiesRequest{})
	require.Equal(t, codes.Unimplemented, code(err))
	_, err = node.node.NodeGetInfo(node.ctx, &csipb.NodeGetInfoRequest{})
	require.NoError(t, err)
}

func TestConfigErrors(t *testing.T) {
	cases := map[string]Config{
		"no root":         {NodeID: "n"},
		"no node id":      {Root: t.TempDir()},
		"unknown mode":    {Root: t.TempDir(), NodeID: "n", Mode: "both"},
		"node without id": {Root: t.TempDir(), Mode: ModeNode},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := New(cfg)
			require.ErrorIs(t, err, ErrInvalidConfig)
		})
	}
	_, err := New(Config{Root: t.TempDir(), Mode: ModeController})
	require.NoError(t, err, "a controller needs no node ID")
}
