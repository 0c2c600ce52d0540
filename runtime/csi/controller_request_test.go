package csi

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/troupe-dev/troupe/messages"
)

// TestRunControllerOn: each controller operation kind runs its one plugin
// call; an unknown kind is Unimplemented and calls nothing; a plugin
// error comes back as its gRPC code name.
func TestRunControllerOn(t *testing.T) {
	vol := &messages.CSIVolume{ID: "v1", ExternalID: "vol-1",
		Claims: []*messages.CSIVolumeClaim{{AllocationID: "a1", Mode: "write",
			AccessMode: messages.CSIAccessSingleNodeWriter, AttachmentMode: messages.CSIAttachFileSystem}}}
	cases := []struct {
		kind   messages.ControllerOpKind
		method string
	}{
		{messages.ControllerCreateVolume, MethodCreateVolume},
		{messages.ControllerPublish, MethodControllerPublish},
		{messages.ControllerUnpublish, MethodControllerUnpublish},
		{messages.ControllerExpand, MethodControllerExpand},
		{messages.ControllerDeleteVolume, MethodDeleteVolume},
		{messages.ControllerCreateSnapshot, MethodCreateSnapshot},
		{messages.ControllerDeleteSnapshot, MethodDeleteSnapshot},
	}
	for _, c := range cases {
		t.Run(string(c.kind), func(t *testing.T) {
			op := &messages.ControllerOp{Kind: string(c.kind), VolumeID: "v1", ExternalVolumeID: "vol-1",
				AllocationID: "a1", ExternalNodeID: "i-1", CapacityMin: 1 << 30, SnapshotID: "snap-1"}
			f := NewFake()
			resp := RunControllerOn(context.Background(), f, &messages.ControllerRequest{Op: op, Volume: vol})
			// The fake answers as a plugin would (an expand of a volume
			// it never created is NotFound): what counts is the one call.
			require.NotEqual(t, codes.Unimplemented.String(), resp.GetCode(), resp.GetMessage())
			for _, m := range Methods {
				want := 0
				if m == c.method {
					want = 1
				}
				require.Equal(t, want, f.Calls(m), m)
			}

			f.FailNext(c.method, status.Error(codes.Unavailable, "plugin gone"), 1)
			resp = RunControllerOn(context.Background(), f, &messages.ControllerRequest{Op: op, Volume: vol})
			require.Equal(t, codes.Unavailable.String(), resp.GetCode())
		})
	}
	t.Run("create returns the volume", func(t *testing.T) {
		resp := RunControllerOn(context.Background(), NewFake(), &messages.ControllerRequest{
			Op: &messages.ControllerOp{Kind: string(messages.ControllerCreateVolume)}, Volume: &messages.CSIVolume{ID: "new"}})
		require.NotEmpty(t, resp.GetVolume().GetExternalID())
	})
	t.Run("publish without the claim", func(t *testing.T) {
		f := NewFake()
		resp := RunControllerOn(context.Background(), f, &messages.ControllerRequest{
			Op: &messages.ControllerOp{Kind: string(messages.ControllerPublish), AllocationID: "a9"}, Volume: vol})
		require.Equal(t, codes.InvalidArgument.String(), resp.GetCode())
		require.Zero(t, f.Calls(MethodControllerPublish))
	})
	t.Run("unknown kind", func(t *testing.T) {
		f := NewFake()
		resp := RunControllerOn(context.Background(), f, &messages.ControllerRequest{Op: &messages.ControllerOp{Kind: "format-disk"}})
		require.Equal(t, codes.Unimplemented.String(), resp.GetCode())
		require.Contains(t, resp.GetMessage(), `"format-disk"`)
		require.Empty(t, f.Order())
	})
}

// TestRunControllerDialFails: an unreachable socket is an answer too.
func TestRunControllerDialFails(t *testing.T) {
	resp := RunController(context.Background(), t.TempDir()+"/none.sock",
		&messages.ControllerRequest{Op: &messages.ControllerOp{Kind: string(messages.ControllerDeleteVolume)}})
	require.NotEmpty(t, resp.GetCode())
}
