package csi

import (
	"context"
	"fmt"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
)

// NodeStage implements Client (NodeStageVolume).
func (c *grpcClient) NodeStage(ctx context.Context, req *StageRequest) error {
	const rpc = "NodeStageVolume"
	if req == nil {
		return fmt.Errorf("%w: %s: nil request", ErrInvalidRequest, rpc)
	}
	if err := required(rpc, "volume ID", req.VolumeID, "staging path", req.StagingPath); err != nil {
		return err
	}
	vc, err := requiredCapability(rpc, req.Capability)
	if err != nil {
		return err
	}
	_, err = c.node.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{
		VolumeId:          req.VolumeID,
		PublishContext:    cloneMap(req.PublishContext),
		StagingTargetPath: req.StagingPath,
		VolumeCapability:  vc,
		Secrets:           cloneMap(req.Secrets),
		VolumeContext:     cloneMap(req.VolumeContext),
	})
	return wrap(rpc, req.VolumeID, err)
}

// NodeUnstage implements Client (NodeUnstageVolume).
func (c *grpcClient) NodeUnstage(ctx context.Context, volumeID, stagingPath string) error {
	const rpc = "NodeUnstageVolume"
	if err := required(rpc, "volume ID", volumeID, "staging path", stagingPath); err != nil {
		return err
	}
	_, err := c.node.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{
		VolumeId: volumeID, StagingTargetPath: stagingPath})
	return wrap(rpc, volumeID, err)
}

// NodePublish implements Client (NodePublishVolume).
func (c *grpcClient) NodePublish(ctx context.Context, req *NodePublishRequest) error {
	const rpc = "NodePublishVolume"
	if req == nil {
		return fmt.Errorf("%w: %s: nil request", ErrInvalidRequest, rpc)
	}
	if err := required(rpc, "volume ID", req.VolumeID, "target path", req.TargetPath); err != nil {
		return err
	}
	vc, err := requiredCapability(rpc, req.Capability)
	if err != nil {
		return err
	}
	_, err = c.node.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{
		VolumeId:          req.VolumeID,
		PublishContext:    cloneMap(req.PublishContext),
		StagingTargetPath: req.StagingPath,
		TargetPath:        req.TargetPath,
		VolumeCapability:  vc,
		Readonly:          req.ReadOnly,
		Secrets:           cloneMap(req.Secrets),
		VolumeContext:     cloneMap(req.VolumeContext),
	})
	return wrap(rpc, req.VolumeID, err)
}

// NodeUnpublish implements Client (NodeUnpublishVolume).
func (c *grpcClient) NodeUnpublish(ctx context.Context, volumeID, targetPath string) error {
	const rpc = "NodeUnpublishVolume"
	if err := required(rpc, "volume ID", volumeID, "target path", targetPath); err != nil {
		return err
	}
	_, err := c.node.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{
		VolumeId: volumeID, TargetPath: targetPath})
	return wrap(rpc, volumeID, err)
}

func requiredCapability(rpc string, c *VolumeCapability) (*csipb.VolumeCapability, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: %s: capability is missing", ErrInvalidRequest, rpc)
	}
	return c.ToCSI()
}
