package csi

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var rwfs = &VolumeCapability{AccessMode: messages.CSIAccessSingleNodeWriter, AttachmentMode: messages.CSIAttachFileSystem}

func TestFakeLifecycleCountsAndOrder(t *testing.T) {
	ctx := context.Background()
	f := NewFake()
	_, err := f.CreateVolume(ctx, &CreateRequest{Name: "vol1", RequiredBytes: 10, Capabilities: []*VolumeCapability{rwfs}})
	require.NoError(t, err)
	pc, err := f.ControllerPublish(ctx, &PublishRequest{VolumeID: "vol1", NodeID: "n1", Capability: rwfs})
	require.NoError(t, err)
	require.Equal(t, "/dev/fake", pc["device"])
	require.True(t, f.ControllerPublished("vol1", "n1"))
	require.NoError(t, f.NodeStage(ctx, &StageRequest{VolumeID: "vol1", StagingPath: "/s", Capability: rwfs}))
	require.NoError(t, f.NodePublish(ctx, &NodePublishRequest{VolumeID: "vol1", StagingPath: "/s", TargetPath: "/t", Capability: rwfs}))
	require.True(t, f.Staged("vol1"))
	require.True(t, f.NodePublished("/t"))

	require.NoError(t, f.NodeUnpublish(ctx, "vol1", "/t"))
	require.NoError(t, f.NodeUnpublish(ctx, "vol1", "/t"), "idempotent")
	require.NoError(t, f.NodeUnstage(ctx, "vol1", "/s"))
	require.NoError(t, f.ControllerUnpublish(ctx, "vol1", "n1", nil))
	require.NoError(t, f.DeleteVolume(ctx, "vol1", nil))

	require.False(t, f.NodePublished("/t"))
	require.False(t, f.Staged("vol1"))
	require.False(t, f.ControllerPublished("vol1", "n1"))
	require.False(t, f.HasVolume("vol1"))
	require.Equal(t, 2, f.Calls(MethodNodeUnpublish))
	require.Equal(t, 1, f.Calls(MethodControllerUnpublish))
	require.Equal(t, 0, f.Calls(MethodProbe))
	require.Equal(t, []string{
		"CreateVolume vol1", "ControllerPublish vol1", "NodeStage vol1", "NodePublish vol1",
		"NodeUnpublish vol1", "NodeUnpublish vol1", "NodeUnstage vol1", "ControllerUnpublish vol1",
		"DeleteVolume vol1",
	}, f.Order())
}

func TestFakeIdentity(t *testing.T) {
	ctx := context.Background()
	f := NewFake()
	name, version, err := f.PluginInfo(ctx)
	require.NoError(t, err)
	require.Equal(t, "fake.csi.troupe.dev", name)
	require.Equal(t, "1.0.0", version)
	ready, err := f.Probe(ctx)
	require.NoError(t, err)
	require.True(t, ready)
	pc, err := f.PluginCapabilities(ctx)
	require.NoError(t, err)
	require.True(t, pc.ControllerService)
	cc, err := f.ControllerCapabilities(ctx)
	require.NoError(t, err)
	require.True(t, cc.PublishUnpublish)
	nc, err := f.NodeCapabilities(ctx)
	require.NoError(t, err)
	require.True(t, nc.StageUnstage)
	info, err := f.NodeInfo(ctx)
	require.NoError(t, err)
	require.Equal(t, "node-1", info.NodeID)
	f.NotReady = true
	ready, err = f.Probe(ctx)
	require.NoError(t, err)
	require.False(t, ready)
	require.Equal(t, []string{"PluginInfo", "Probe", "PluginCapabilities", "ControllerCapabilities",
		"NodeCapabilities", "NodeInfo", "Probe"}, f.Order())
}

func TestFakeFailNext(t *testing.T) {
	ctx := context.Background()
	f := NewFake()
	f.FailNext(MethodNodeUnpublish, status.Error(codes.Internal, "busy"), 2)
	f.FailNextFor(MethodControllerPublish, "vol2", status.Error(codes.Unavailable, "down"), 1)

	for i := range 2 {
		err := f.NodeUnpublish(ctx, "vol1", "/t")
		require.True(t, IsRetryable(err), "attempt %d: %v", i, err)
		require.False(t, IsNotFound(err))
	}
	require.NoError(t, f.NodeUnpublish(ctx, "vol1", "/t"))
	require.Equal(t, 3, f.Calls(MethodNodeUnpublish))

	_, err := f.ControllerPublish(ctx, &PublishRequest{VolumeID: "vol1", NodeID: "n", Capability: rwfs})
	require.NoError(t, err, "the fault is for vol2 only")
	_, err = f.ControllerPublish(ctx, &PublishRequest{VolumeID: "vol2", NodeID: "n", Capability: rwfs})
	require.True(t, IsUnavailable(err))
	require.False(t, f.ControllerPublished("vol2", "n"))
	_, err = f.ControllerPublish(ctx, &PublishRequest{VolumeID: "vol2", NodeID: "n", Capability: rwfs})
	require.NoError(t, err)

	f.FailNext(MethodProbe, status.Error(codes.Internal, "x"), -1)
	for range 3 {
		_, err := f.Probe(ctx)
		require.Error(t, err)
	}
	f.Reset()
	_, err = f.Probe(ctx)
	require.NoError(t, err)

	require.Panics(t, func() { f.FailNext("NodeUnpublishVolume", nil, 1) })
}

func TestFakeValidates(t *testing.T) {
	ctx := context.Background()
	f := NewFake()
	err := f.NodeUnpublish(ctx, "", "/t")
	require.ErrorIs(t, err, ErrInvalidRequest)
	_, err = f.ControllerPublish(ctx, &PublishRequest{VolumeID: "v", NodeID: "n",
		Capability: &VolumeCapability{AccessMode: "rw", AttachmentMode: messages.CSIAttachFileSystem}})
	require.ErrorIs(t, err, ErrUnknownAccessMode)
	_, err = f.ControllerExpand(ctx, "missing", 10, nil)
	require.True(t, IsNotFound(err))
	require.Equal(t, 1, f.Calls(MethodNodeUnpublish), "failed calls count")
}

func TestFakeBlockAndMaxInFlight(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f := NewFake()
	release := f.Block(MethodControllerUnpublish, "vol1")
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		errs <- f.ControllerUnpublish(ctx, "vol1", "n1", nil)
	}()
	require.Eventually(t, func() bool { return f.Calls(MethodControllerUnpublish) == 1 },
		5*time.Second, time.Millisecond)
	require.NoError(t, f.ControllerUnpublish(ctx, "vol2", "n1", nil), "other volumes are not blocked")
	require.Equal(t, 2, f.MaxInFlight(MethodControllerUnpublish))
	require.Zero(t, f.MaxInFlight(MethodNodeUnpublish, MethodControllerPublish))
	release()
	release()
	wg.Wait()
	require.NoError(t, <-errs)

	require.NoError(t, f.ControllerUnpublish(ctx, "vol1", "n1", nil))
	require.Equal(t, 2, f.MaxInFlight())
	require.Equal(t, []string{"ControllerUnpublish vol1", "ControllerUnpublish vol2", "ControllerUnpublish vol1"}, f.Order())
}

func TestFakeBlockEndsWithContext(t *testing.T) {
	f := NewFake()
	f.Block(MethodNodeUnpublish, "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := f.NodeUnpublish(ctx, "vol1", "/t")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.True(t, IsRetryable(err))
}

func TestFakeSerialCallsDoNotOverlap(t *testing.T) {
	ctx := context.Background()
	f := NewFake()
	for _, v := range []string{"a", "b", "c"} {
		_, err := f.ControllerPublish(ctx, &PublishRequest{VolumeID: v, NodeID: "n", Capability: rwfs})
		require.NoError(t, err)
		require.NoError(t, f.ControllerUnpublish(ctx, v, "", nil))
	}
	require.Equal(t, 1, f.MaxInFlight(MethodControllerPublish, MethodControllerUnpublish))
	require.Equal(t, 0, f.MaxInFlight(MethodNodeStage))
}
