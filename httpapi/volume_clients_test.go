package httpapi

import (
	"net/http/httptest"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// createdAnswer answers create with the spec plus what a plugin adds.
func createdAnswer(req *messages.VolumeOpRequest) (*messages.VolumeOpResponse, error) {
	if req.Op != "create" {
		return &messages.VolumeOpResponse{Index: 30}, nil
	}
	v := proto.Clone(req.Volume).(*messages.CSIVolume)
	v.ExternalID, v.Capacity = "vol-0abc", 1<<30
	return &messages.VolumeOpResponse{Index: 31, Volume: v}, nil
}

// TestVolumeOpsTroupeClient drives the endpoints with troupe's api client.
func TestVolumeOpsTroupeClient(t *testing.T) {
	f := &fakeBackend{answer: createdAnswer}
	srv := httptest.NewServer(New(f, nil, Options{}))
	t.Cleanup(srv.Close)
	c, err := api.NewClient(&api.Config{Address: srv.URL})
	require.NoError(t, err)

	vol := &messages.CSIVolume{ID: "vol1", Name: "data", PluginID: "ebs", RequestedCapabilities: []*messages.CSIVolumeCapability{
		{AccessMode: messages.CSIAccessSingleNodeWriter, AttachmentMode: messages.CSIAttachFileSystem}}}
	created, wm, err := c.Volumes().Create(vol, nil)
	require.NoError(t, err)
	require.Len(t, created, 1)
	require.Equal(t, "vol-0abc", created[0].ExternalID)
	require.Equal(t, uint64(31), wm.LastIndex)

	require.NoError(t, c.Volumes().Detach("vol1", "node-1", nil))
	require.NoError(t, c.Volumes().Delete("vol1", map[string]string{"b": "2", "a": "x=y"}, nil))
	require.NoError(t, c.Volumes().Deregister("vol1", true, nil))
	require.ErrorIs(t, c.Volumes().Delete("vol1", map[string]string{"k": "a,b"}, nil), api.ErrBadSecret)

	reqs := f.sent()
	require.Len(t, reqs, 4, "the bad secret was never sent")
	require.Equal(t, "create", reqs[0].Op)
	require.Equal(t, "default", reqs[0].Volume.Namespace)
	require.Equal(t, &messages.VolumeOpRequest{Op: "detach", VolumeID: "vol1", NodeID: "node-1"}, reqs[1])
	require.Equal(t, &messages.VolumeOpRequest{Op: "delete", VolumeID: "vol1", Secrets: map[string]string{"a": "x=y", "b": "2"}}, reqs[2])
	require.Equal(t, &messages.VolumeOpRequest{Op: "deregister", VolumeID: "vol1", Force: true}, reqs[3])

	f.answer = answerErr("not_found", `volume "nope" not found`)
	require.True(t, api.IsNotFound(c.Volumes().Deregister("nope", false, nil)))
}

// TestVolumeOpsNomadClient drives the endpoints with Nomad's own client.
func TestVolumeOpsNomadClient(t *testing.T) {
	f := &fakeBackend{answer: createdAnswer}
	srv := httptest.NewServer(New(f, nil, Options{}))
	t.Cleanup(srv.Close)
	c, err := nomad.NewClient(&nomad.Config{Address: srv.URL})
	require.NoError(t, err)

	vol := &nomad.CSIVolume{ID: "vol1", Name: "data", PluginID: "ebs", RequestedCapacityMin: 1 << 30,
		RequestedCapabilities: []*nomad.CSIVolumeCapability{{AccessMode: "single-node-writer", AttachmentMode: "file-system"}}}
	created, _, err := c.CSIVolumes().Create(vol, nil)
	require.NoError(t, err)
	require.Len(t, created, 1)
	require.Equal(t, "vol-0abc", created[0].ExternalID)
	require.Equal(t, int64(1<<30), created[0].Capacity)

	require.NoError(t, c.CSIVolumes().Detach("vol1", "node-1", nil))
	require.NoError(t, c.CSIVolumes().DeleteOpts(&nomad.CSIVolumeDeleteRequest{ExternalVolumeID: "vol1",
		Secrets: nomad.CSISecrets{"token": "t1"}}, nil))
	require.NoError(t, c.CSIVolumes().Deregister("vol1", false, nil))

	reqs := f.sent()
	require.Len(t, reqs, 4)
	require.Equal(t, int64(1<<30), reqs[0].Volume.RequestedCapacityMin)
	require.Equal(t, &messages.VolumeOpRequest{Op: "detach", VolumeID: "vol1", NodeID: "node-1"}, reqs[1])
	require.Equal(t, &messages.VolumeOpRequest{Op: "delete", VolumeID: "vol1", Secrets: map[string]string{"token": "t1"}}, reqs[2])
	require.Equal(t, &messages.VolumeOpRequest{Op: "deregister", VolumeID: "vol1"}, reqs[3])
}
