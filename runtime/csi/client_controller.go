package csi

import (
	"context"
	"fmt"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
)

// ControllerPublish implements Client (ControllerPublishVolume).
func (c *grpcClient) ControllerPublish(ctx context.Context, req *PublishRequest) (map[string]string, error) {
	const rpc = "ControllerPublishVolume"
	if req == nil {
		return nil, fmt.Errorf("%w: %s: nil request", ErrInvalidRequest, rpc)
	}
	if err := required(rpc, "volume ID", req.VolumeID, "node ID", req.NodeID); err != nil {
		return nil, err
	}
	vc, err := requiredCapability(rpc, req.Capability)
	if err != nil {
		return nil, err
	}
	resp, err := c.controller.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{
		VolumeId:         req.VolumeID,
		NodeId:           req.NodeID,
		VolumeCapability: vc,
		Readonly:         req.ReadOnly,
		Secrets:          cloneMap(req.Secrets),
		VolumeContext:    cloneMap(req.VolumeContext),
	})
	if err != nil {
		return nil, wrap(rpc, req.VolumeID, err)
	}
	return cloneMap(resp.GetPublishContext()), nil
}

// ControllerUnpublish implements Client (ControllerUnpublishVolume). An
// empty nodeID unpublishes from every node.
func (c *grpcClient) ControllerUnpublish(ctx context.Context, volumeID, nodeID string, secrets map[string]string) error {
	const rpc = "ControllerUnpublishVolume"
	if err := required(rpc, "volume ID", volumeID); err != nil {
		return err
	}
	_, err := c.controller.ControllerUnpublishVolume(ctx, &csipb.ControllerUnpublishVolumeRequest{
		VolumeId: volumeID, NodeId: nodeID, Secrets: cloneMap(secrets)})
	return wrap(rpc, volumeID, err)
}

// CreateVolume implements Client.
func (c *grpcClient) CreateVolume(ctx context.Context, req *CreateRequest) (*Volume, error) {
	const rpc = "CreateVolume"
	if req == nil {
		return nil, fmt.Errorf("%w: %s: nil request", ErrInvalidRequest, rpc)
	}
	if err := required(rpc, "name", req.Name); err != nil {
		return nil, err
	}
	if len(req.Capabilities) == 0 {
		return nil, fmt.Errorf("%w: %s: no capabilities", ErrInvalidRequest, rpc)
	}
	in, err := createRequestToCSI(req)
	if err != nil {
		return nil, err
	}
	resp, err := c.controller.CreateVolume(ctx, in)
	if err != nil {
		return nil, wrap(rpc, req.Name, err)
	}
	return volumeFromCSI(resp.GetVolume()), nil
}

// DeleteVolume implements Client.
func (c *grpcClient) DeleteVolume(ctx context.Context, volumeID string, secrets map[string]string) error {
	const rpc = "DeleteVolume"
	if err := required(rpc, "volume ID", volumeID); err != nil {
		return err
	}
	_, err := c.controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{
		VolumeId: volumeID, Secrets: cloneMap(secrets)})
	return wrap(rpc, volumeID, err)
}

// ControllerExpand implements Client (ControllerExpandVolume): it asks
// for at least bytes and returns the new capacity.
func (c *grpcClient) ControllerExpand(ctx context.Context, volumeID string, bytes int64, secrets map[string]string) (int64, error) {
	const rpc = "ControllerExpandVolume"
	if err := required(rpc, "volume ID", volumeID); err != nil {
		return 0, err
	}
	if bytes <= 0 {
		return 0, fmt.Errorf("%w: %s: capacity %d is not positive", ErrInvalidRequest, rpc, bytes)
	}
	resp, err := c.controller.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{
		VolumeId:      volumeID,
		CapacityRange: &csipb.CapacityRange{RequiredBytes: bytes},
		Secrets:       cloneMap(secrets),
	})
	if err != nil {
		return 0, wrap(rpc, volumeID, err)
	}
	return resp.GetCapacityBytes(), nil
}

// CreateSnapshot implements Client.
func (c *grpcClient) CreateSnapshot(ctx context.Context, req *SnapshotRequest) (*Snapshot, error) {
	const rpc = "CreateSnapshot"
	if req == nil {
		return nil, fmt.Errorf("%w: %s: nil request", ErrInvalidRequest, rpc)
	}
	if err := required(rpc, "source volume ID", req.SourceVolumeID, "name", req.Name); err != nil {
		return nil, err
	}
	resp, err := c.controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{
		SourceVolumeId: req.SourceVolumeID,
		Name:           req.Name,
		Secrets:        cloneMap(req.Secrets),
		Parameters:     cloneMap(req.Parameters),
	})
	if err != nil {
		return nil, wrap(rpc, req.SourceVolumeID, err)
	}
	return snapshotFromCSI(resp.GetSnapshot()), nil
}

// DeleteSnapshot implements Client.
func (c *grpcClient) DeleteSnapshot(ctx context.Context, snapshotID string, secrets map[string]string) error {
	const rpc = "DeleteSnapshot"
	if err := required(rpc, "snapshot ID", snapshotID); err != nil {
		return err
	}
	_, err := c.controller.DeleteSnapshot(ctx, &csipb.DeleteSnapshotRequest{
		SnapshotId: snapshotID, Secrets: cloneMap(secrets)})
	return wrap(rpc, snapshotID, err)
}
