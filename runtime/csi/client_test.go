package csi_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi"
	"github.com/troupe-dev/troupe/runtime/csi/hostpath"
	"google.golang.org/grpc/codes"
)

var rwfs = &csi.VolumeCapability{AccessMode: messages.CSIAccessSingleNodeWriter,
	AttachmentMode: messages.CSIAttachFileSystem, MountFlags: []string{"noatime"}}

// testCtx bounds a test's calls.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// startPlugin runs a hostpath plugin in a temp dir and dials it.
func startPlugin(t *testing.T, cfg hostpath.Config) (*hostpath.Plugin, csi.Client, string) {
	t.Helper()
	dir := t.TempDir()
	if cfg.Root == "" {
		cfg.Root = filepath.Join(dir, "vols")
	}
	if cfg.NodeID == "" {
		cfg.NodeID = "node-1"
	}
	p, err := hostpath.New(cfg)
	require.NoError(t, err)
	// A short path (unix sockets allow 108 bytes) with URL-special
	// characters, which Dial must not parse.
	sockDir, err := os.MkdirTemp("", "csi#?%")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "csi.sock")
	require.NoError(t, p.Start(context.Background(), sock))
	t.Cleanup(p.Stop)
	c, err := csi.Dial(testCtx(t), "unix://"+sock)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return p, c, dir
}

func TestDialFailsFastWithoutPlugin(t *testing.T) {
	start := time.Now()
	_, err := csi.Dial(testCtx(t), filepath.Join(t.TempDir(), "missing.sock"))
	require.ErrorIs(t, err, csi.ErrDial)
	require.True(t, csi.IsUnavailable(err))
	require.Less(t, time.Since(start), csi.DialTimeout)

	_, err = csi.Dial(testCtx(t), "unix://")
	require.ErrorIs(t, err, csi.ErrDial)
}

func TestIdentityAndCapabilities(t *testing.T) {
	ctx := testCtx(t)
	_, c, _ := startPlugin(t, hostpath.Config{NodeID: "n7", MaxVolumesPerNode: 12,
		Topology: map[string]string{"zone": "a"}})
	name, version, err := c.PluginInfo(ctx)
	require.NoError(t, err)
	require.Equal(t, hostpath.DefaultName, name)
	require.NotEmpty(t, version)

	ready, err := c.Probe(ctx)
	require.NoError(t, err)
	require.True(t, ready)

	pc, err := c.PluginCapabilities(ctx)
	require.NoError(t, err)
	require.Equal(t, csi.PluginCaps{ControllerService: true, VolumeAccessibility: true, OnlineExpansion: true}, pc)

	cc, err := c.ControllerCapabilities(ctx)
	require.NoError(t, err)
	require.Equal(t, csi.ControllerCaps{CreateDelete: true, PublishUnpublish: true, PublishReadOnly: true,
		Expand: true, Snapshots: true}, cc)

	nc, err := c.NodeCapabilities(ctx)
	require.NoError(t, err)
	require.Equal(t, csi.NodeCaps{StageUnstage: true}, nc)

	info, err := c.NodeInfo(ctx)
	require.NoError(t, err)
	require.Equal(t, csi.NodeInfo{NodeID: "n7", MaxVolumes: 12, Topology: map[string]string{"zone": "a"}}, info)
}

func TestFullLifecycle(t *testing.T) {
	ctx := testCtx(t)
	_, c, dir := startPlugin(t, hostpath.Config{})
	vol, err := c.CreateVolume(ctx, &csi.CreateRequest{Name: "vol1", RequiredBytes: 1 << 20,
		Capabilities: []*csi.VolumeCapability{rwfs}, Parameters: map[string]string{"k": "v"}})
	require.NoError(t, err)
	require.Equal(t, "vol1", vol.ID)
	require.Equal(t, int64(1<<20), vol.CapacityBytes)
	volDir := filepath.Join(dir, "vols", "vol1")
	require.DirExists(t, volDir)

	pubCtx, err := c.ControllerPublish(ctx, &csi.PublishRequest{VolumeID: "vol1", NodeID: "node-1", Capability: rwfs})
	require.NoError(t, err)
	require.Equal(t, volDir, pubCtx["path"])

	staging, target := filepath.Join(dir, "staging", "vol1"), filepath.Join(dir, "alloc", "data")
	require.NoError(t, c.NodeStage(ctx, &csi.StageRequest{VolumeID: "vol1", StagingPath: staging,
		Capability: rwfs, PublishContext: pubCtx}))
	require.FileExists(t, filepath.Join(staging, hostpath.StagedMarker))
	require.NoError(t, c.NodePublish(ctx, &csi.NodePublishRequest{VolumeID: "vol1", StagingPath: staging,
		TargetPath: target, Capability: rwfs, PublishContext: pubCtx}))

	require.NoError(t, os.WriteFile(filepath.Join(target, "hello.txt"), []byte("hi"), 0o644))
	got, err := os.ReadFile(filepath.Join(volDir, "hello.txt"))
	require.NoError(t, err)
	require.Equal(t, "hi", string(got))

	err = c.DeleteVolume(ctx, "vol1", nil)
	require.Equal(t, codes.FailedPrecondition, csi.Code(err), "published volumes are not deleted")

	require.NoError(t, c.NodeUnpublish(ctx, "vol1", target))
	require.NoFileExists(t, target)
	require.NoError(t, c.NodeUnpublish(ctx, "vol1", target), "already unpublished succeeds")
	require.NoError(t, c.NodeUnstage(ctx, "vol1", staging))
	require.NoFileExists(t, filepath.Join(staging, hostpath.StagedMarker))
	require.NoError(t, c.NodeUnstage(ctx, "vol1", staging), "already unstaged succeeds")
	require.NoError(t, c.ControllerUnpublish(ctx, "vol1", "node-1", nil))
	require.NoError(t, c.DeleteVolume(ctx, "vol1", nil))
	require.NoDirExists(t, volDir)
	require.NoError(t, c.DeleteVolume(ctx, "vol1", nil), "deleting twice succeeds")
}

func TestExpandAndSnapshots(t *testing.T) {
	ctx := testCtx(t)
	_, c, dir := startPlugin(t, hostpath.Config{})
	_, err := c.CreateVolume(ctx, &csi.CreateRequest{Name: "src", RequiredBytes: 100,
		Capabilities: []*csi.VolumeCapability{rwfs}})
	require.NoError(t, err)
	size, err := c.ControllerExpand(ctx, "src", 500, nil)
	require.NoError(t, err)
	require.Equal(t, int64(500), size)
	_, err = c.ControllerExpand(ctx, "nope", 500, nil)
	require.True(t, csi.IsNotFound(err))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "vols", "src", "f"), []byte("data"), 0o644))
	snap, err := c.CreateSnapshot(ctx, &csi.SnapshotRequest{SourceVolumeID: "src", Name: "snap1"})
	require.NoError(t, err)
	require.Equal(t, "snap1", snap.ID)
	require.Equal(t, "src", snap.SourceVolumeID)
	require.Equal(t, int64(4), snap.SizeBytes)
	require.True(t, snap.ReadyToUse)
	require.False(t, snap.CreateTime.IsZero())

	_, err = c.CreateVolume(ctx, &csi.CreateRequest{Name: "copy", SnapshotID: "snap1",
		Capabilities: []*csi.VolumeCapability{rwfs}})
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(dir, "vols", "copy", "f"))
	require.NoError(t, err)
	require.Equal(t, "data", string(got))

	require.NoError(t, c.DeleteSnapshot(ctx, "snap1", nil))
	require.NoError(t, c.DeleteSnapshot(ctx, "snap1", nil))
	_, err = c.CreateVolume(ctx, &csi.CreateRequest{Name: "copy2", SnapshotID: "snap1",
		Capabilities: []*csi.VolumeCapability{rwfs}})
	require.True(t, csi.IsNotFound(err))
}

func TestPluginErrorsAreClassified(t *testing.T) {
	ctx := testCtx(t)
	_, c, _ := startPlugin(t, hostpath.Config{})
	err := c.ControllerUnpublish(ctx, "unknown", "node-1", nil)
	require.True(t, csi.IsNotFound(err), "%v", err)
	require.False(t, csi.IsRetryable(err))

	_, err = c.ControllerPublish(ctx, &csi.PublishRequest{VolumeID: "unknown", NodeID: "node-1", Capability: rwfs})
	require.True(t, csi.IsNotFound(err))

	block := &csi.VolumeCapability{AccessMode: messages.CSIAccessSingleNodeWriter, AttachmentMode: messages.CSIAttachBlockDevice}
	_, err = c.CreateVolume(ctx, &csi.CreateRequest{Name: "b", Capabilities: []*csi.VolumeCapability{block}})
	require.Equal(t, codes.InvalidArgument, csi.Code(err))
	require.False(t, csi.IsRetryable(err))
	require.Contains(t, err.Error(), "CreateVolume b")
}

func TestClientValidatesBeforeCalling(t *testing.T) {
	ctx := testCtx(t)
	p, c, _ := startPlugin(t, hostpath.Config{})
	bad := &csi.VolumeCapability{AccessMode: "single-node", AttachmentMode: messages.CSIAttachFileSystem}
	cases := []struct {
		name string
		call func() error
		want error
	}{
		{"publish without node", func() error {
			_, err := c.ControllerPublish(ctx, &csi.PublishRequest{VolumeID: "v", Capability: rwfs})
			return err
		}, csi.ErrInvalidRequest},
		{"publish unknown mode", func() error {
			_, err := c.ControllerPublish(ctx, &csi.PublishRequest{VolumeID: "v", NodeID: "n", Capability: bad})
			return err
		}, csi.ErrUnknownAccessMode},
		{"publish nil", func() error { _, err := c.ControllerPublish(ctx, nil); return err }, csi.ErrInvalidRequest},
		{"unpublish no volume", func() error { return c.ControllerUnpublish(ctx, "", "n", nil) }, csi.ErrInvalidRequest},
		{"create no caps", func() error {
			_, err := c.CreateVolume(ctx, &csi.CreateRequest{Name: "v"})
			return err
		}, csi.ErrInvalidRequest},
		{"delete no volume", func() error { return c.DeleteVolume(ctx, "", nil) }, csi.ErrInvalidRequest},
		{"expand zero", func() error { _, err := c.ControllerExpand(ctx, "v", 0, nil); return err }, csi.ErrInvalidRequest},
		{"snapshot no name", func() error {
			_, err := c.CreateSnapshot(ctx, &csi.SnapshotRequest{SourceVolumeID: "v"})
			return err
		}, csi.ErrInvalidRequest},
		{"delete snapshot no id", func() error { return c.DeleteSnapshot(ctx, "", nil) }, csi.ErrInvalidRequest},
		{"stage no path", func() error {
			return c.NodeStage(ctx, &csi.StageRequest{VolumeID: "v", Capability: rwfs})
		}, csi.ErrInvalidRequest},
		{"stage no capability", func() error {
			return c.NodeStage(ctx, &csi.StageRequest{VolumeID: "v", StagingPath: "/s"})
		}, csi.ErrInvalidRequest},
		{"unstage no path", func() error { return c.NodeUnstage(ctx, "v", "") }, csi.ErrInvalidRequest},
		{"publish no target", func() error {
			return c.NodePublish(ctx, &csi.NodePublishRequest{VolumeID: "v", Capability: rwfs})
		}, csi.ErrInvalidRequest},
		{"unpublish no target", func() error { return c.NodeUnpublish(ctx, "v", "") }, csi.ErrInvalidRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.ErrorIs(t, err, tc.want)
			require.Equal(t, codes.InvalidArgument, csi.Code(err))
		})
	}
	require.Empty(t, p.Calls(), "no RPC reached the plugin")
}

func TestInjectedFaultsAreClassified(t *testing.T) {
	cases := []struct {
		code                             codes.Code
		notFound, unavailable, retryable bool
	}{
		{codes.Internal, false, false, true},
		{codes.Unavailable, false, true, true},
		{codes.NotFound, true, false, false},
		{codes.Aborted, false, false, true},
		{codes.DeadlineExceeded, false, false, true},
		{codes.ResourceExhausted, false, false, true},
		{codes.InvalidArgument, false, false, false},
		{codes.FailedPrecondition, false, false, false},
		{codes.AlreadyExists, false, false, false},
	}
	ctx := testCtx(t)
	p, c, _ := startPlugin(t, hostpath.Config{})
	for _, tc := range cases {
		t.Run(tc.code.String(), func(t *testing.T) {
			require.NoError(t, p.FailNext("NodeUnpublishVolume", tc.code, 1))
			err := c.NodeUnpublish(ctx, "vol1", "/nonexistent/target")
			require.Equal(t, tc.code, csi.Code(err))
			require.Equal(t, tc.notFound, csi.IsNotFound(err))
			require.Equal(t, tc.unavailable, csi.IsUnavailable(err))
			require.Equal(t, tc.retryable, csi.IsRetryable(err))
			require.NoError(t, c.NodeUnpublish(ctx, "vol1", "/nonexistent/target"), "fault used up")
		})
	}
}

func TestNodeUnpublishFailsNTimesThenHeals(t *testing.T) {
	ctx := testCtx(t)
	p, c, _ := startPlugin(t, hostpath.Config{})
	require.NoError(t, p.FailNext("NodeUnpublishVolume", codes.Internal, 3))
	var failures int
	for c.NodeUnpublish(ctx, "vol1", "/gone") != nil {
		failures++
		require.Less(t, failures, 10)
	}
	require.Equal(t, 3, failures)
	var codesSeen []string
	for _, call := range p.Calls() {
		codesSeen = append(codesSeen, call.Code)
	}
	require.Equal(t, []string{"Internal", "Internal", "Internal", "OK"}, codesSeen)
}

func TestUnavailableAfterPluginStops(t *testing.T) {
	ctx := testCtx(t)
	p, c, _ := startPlugin(t, hostpath.Config{})
	_, err := c.Probe(ctx)
	require.NoError(t, err)
	p.Stop()
	_, err = c.Probe(ctx)
	require.True(t, csi.IsUnavailable(err), "%v", err)
	require.True(t, csi.IsRetryable(err))
}
