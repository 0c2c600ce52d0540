package hostpath

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
)

func TestNodePublishMountsTheVolume(t *testing.T) {
	for _, symlinks := range []bool{false, true} {
		bind := !symlinks && os.Geteuid() == 0
		t.Run(fmt.Sprintf("symlinks=%t root=%t", symlinks, os.Geteuid() == 0), func(t *testing.T) {
			e := start(t, Config{Symlinks: symlinks})
			e.create("v1")
			e.stage("v1")
			require.NoError(t, os.MkdirAll(e.target("v1"), 0o755), "the CO may create the target")
			require.NoError(t, e.publish("v1", false))
			require.NoError(t, e.publish("v1", false), "publishing twice succeeds")

			fi, err := os.Lstat(e.target("v1"))
			require.NoError(t, err)
			isLink := fi.Mode()&os.ModeSymlink != 0
			if !bind {
				require.True(t, isLink)
			} else {
				require.False(t, isLink)
				mounted, err := isMountPoint(e.target("v1"))
				require.NoError(t, err)
				require.True(t, mounted)
			}
			require.NoError(t, os.WriteFile(filepath.Join(e.target("v1"), "f"), []byte("x"), 0o644))
			require.FileExists(t, filepath.Join(e.volDir("v1"), "f"))

			require.NoError(t, e.unpublish("v1"))
			require.NoFileExists(t, e.target("v1"))
			require.FileExists(t, filepath.Join(e.volDir("v1"), "f"), "data stays in the volume")
			require.NoError(t, e.unpublish("v1"), "already unpublished succeeds")
		})
	}
}

func TestReadOnlyBindMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("bind mounts need root")
	}
	e := start(t, Config{})
	e.create("v1")
	e.stage("v1")
	require.NoError(t, e.publish("v1", true))
	t.Cleanup(func() { _ = e.unpublish("v1") })
	err := os.WriteFile(filepath.Join(e.target("v1"), "f"), []byte("x"), 0o644)
	require.True(t, errors.Is(err, syscall.EROFS), "%v", err)
	require.Equal(t, codes.AlreadyExists, code(e.publish("v1", false)), "read-only differs")
	require.NoError(t, e.unpublish("v1"))
	mounted, err := isMountPoint(e.volDir("v1"))
	require.NoError(t, err)
	require.False(t, mounted)
}

func TestNodeStageAndUnstageOrder(t *testing.T) {
	e := start(t, Config{})
	e.create("v1")
	require.Equal(t, codes.FailedPrecondition, code(e.publish("v1", false)), "not staged")
	e.stage("v1")
	e.stage("v1") // idempotent
	require.NoError(t, e.publish("v1", false))
	_, err := e.node.NodeUnstageVolume(e.ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: "v1", StagingTargetPath: e.staging("v1")})
	require.Equal(t, codes.FailedPrecondition, code(err), "unstage while published")
	require.NoError(t, e.unpublish("v1"))
	for range 2 {
		_, err = e.node.NodeUnstageVolume(e.ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: "v1", StagingTargetPath: e.staging("v1")})
		require.NoError(t, err)
	}
	require.NoFileExists(t, filepath.Join(e.staging("v1"), StagedMarker))

	_, err = e.node.NodeStageVolume(e.ctx, &csipb.NodeStageVolumeRequest{VolumeId: "v2",
		StagingTargetPath: e.staging("v1"), VolumeCapability: rw})
	require.Equal(t, codes.NotFound, code(err), "unknown volume")
}

func TestNodeArgumentErrors(t *testing.T) {
	e := start(t, Config{})
	e.create("v1")
	block := &csipb.VolumeCapability{AccessMode: rw.AccessMode,
		AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}}}
	cases := []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"stage no volume", func() error {
			_, err := e.node.NodeStageVolume(e.ctx, &csipb.NodeStageVolumeRequest{StagingTargetPath: "/s", VolumeCapability: rw})
			return err
		}, codes.InvalidArgument},
		{"stage no path", func() error {
			_, err := e.node.NodeStageVolume(e.ctx, &csipb.NodeStageVolumeRequest{VolumeId: "v1", VolumeCapability: rw})
			return err
		}, codes.InvalidArgument},
		{"stage no capability", func() error {
			_, err := e.node.NodeStageVolume(e.ctx, &csipb.NodeStageVolumeRequest{VolumeId: "v1", StagingTargetPath: "/s"})
			return err
		}, codes.InvalidArgument},
		{"stage block", func() error {
			_, err := e.node.NodeStageVolume(e.ctx, &csipb.NodeStageVolumeRequest{VolumeId: "v1", StagingTargetPath: "/s", VolumeCapability: block})
			return err
		}, codes.InvalidArgument},
		{"publish no staging", func() error {
			_, err := e.node.NodePublishVolume(e.ctx, &csipb.NodePublishVolumeRequest{VolumeId: "v1", TargetPath: "/t", VolumeCapability: rw})
			return err
		}, codes.InvalidArgument},
		{"publish unknown volume", func() error {
			_, err := e.node.NodePublishVolume(e.ctx, &csipb.NodePublishVolumeRequest{VolumeId: "nope",
				StagingTargetPath: "/s", TargetPath: "/t", VolumeCapability: rw})
			return err
		}, codes.NotFound},
		{"unpublish no target", func() error {
			_, err := e.node.NodeUnpublishVolume(e.ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: "v1"})
			return err
		}, codes.InvalidArgument},
		{"unstage no volume", func() error {
			_, err := e.node.NodeUnstageVolume(e.ctx, &csipb.NodeUnstageVolumeRequest{StagingTargetPath: "/s"})
			return err
		}, codes.InvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, code(tc.call())) })
	}
}

func TestNodeInfoAndCapabilities(t *testing.T) {
	e := start(t, Config{NodeID: "n9", MaxVolumesPerNode: 3})
	info, err := e.node.NodeGetInfo(e.ctx, &csipb.NodeGetInfoRequest{})
	require.NoError(t, err)
	require.Equal(t, "n9", info.GetNodeId())
	require.Equal(t, int64(3), info.GetMaxVolumesPerNode())
	require.Nil(t, info.GetAccessibleTopology())
	caps, err := e.node.NodeGetCapabilities(e.ctx, &csipb.NodeGetCapabilitiesRequest{})
	require.NoError(t, err)
	require.Len(t, caps.GetCapabilities(), 1)
	require.Equal(t, csipb.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME, caps.GetCapabilities()[0].GetRpc().GetType())
}
