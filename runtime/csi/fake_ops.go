package csi

import (
	"context"
	"fmt"
	"maps"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ControllerPublish implements Client. Unknown volumes are accepted: a
// registered volume need not have been created through the Fake.
func (f *Fake) ControllerPublish(ctx context.Context, req *PublishRequest) (map[string]string, error) {
	if req == nil {
		return nil, fmt.Errorf("%w: ControllerPublish: nil request", ErrInvalidRequest)
	}
	err := f.do(ctx, MethodControllerPublish, req.VolumeID, func() error {
		if err := required(MethodControllerPublish, "volume ID", req.VolumeID, "node ID", req.NodeID); err != nil {
			return err
		}
		if err := checkCapability(MethodControllerPublish, req.Capability); err != nil {
			return err
		}
		if f.attached[req.VolumeID] == nil {
			f.attached[req.VolumeID] = map[string]bool{}
		}
		f.attached[req.VolumeID][req.NodeID] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	return maps.Clone(f.PublishContext), nil
}

// ControllerUnpublish implements Client; an empty nodeID detaches from
// every node.
func (f *Fake) ControllerUnpublish(ctx context.Context, volumeID, nodeID string, _ map[string]string) error {
	return f.do(ctx, MethodControllerUnpublish, volumeID, func() error {
		if err := required(MethodControllerUnpublish, "volume ID", volumeID); err != nil {
			return err
		}
		if nodeID == "" {
			delete(f.attached, volumeID)
		} else {
			delete(f.attached[volumeID], nodeID)
		}
		return nil
	})
}

// CreateVolume implements Client; the volume ID is the request's name.
func (f *Fake) CreateVolume(ctx context.Context, req *CreateRequest) (*Volume, error) {
	if req == nil {
		return nil, fmt.Errorf("%w: CreateVolume: nil request", ErrInvalidRequest)
	}
	var out *Volume
	err := f.do(ctx, MethodCreateVolume, req.Name, func() error {
		if err := required(MethodCreateVolume, "name", req.Name); err != nil {
			return err
		}
		if _, err := capabilitiesToCSI(req.Capabilities); err != nil {
			return err
		}
		v, ok := f.volumes[req.Name]
		if !ok {
			v = &Volume{ID: req.Name, CapacityBytes: max(req.RequiredBytes, req.LimitBytes)}
			f.volumes[req.Name] = v
		}
		out = &Volume{ID: v.ID, CapacityBytes: v.CapacityBytes}
		return nil
	})
	return out, err
}

// DeleteVolume implements Client.
func (f *Fake) DeleteVolume(ctx context.Context, volumeID string, _ map[string]string) error {
	return f.do(ctx, MethodDeleteVolume, volumeID, func() error {
		if err := required(MethodDeleteVolume, "volume ID", volumeID); err != nil {
			return err
		}
		delete(f.volumes, volumeID)
		return nil
	})
}

// ControllerExpand implements Client. Volumes that the Fake did not
// create answer NotFound.
func (f *Fake) ControllerExpand(ctx context.Context, volumeID string, bytes int64, _ map[string]string) (int64, error) {
	var capacity int64
	err := f.do(ctx, MethodControllerExpand, volumeID, func() error {
		v, ok := f.volumes[volumeID]
		if !ok {
			return status.Errorf(codes.NotFound, "volume %q not found", volumeID)
		}
		v.CapacityBytes = max(v.CapacityBytes, bytes)
		capacity = v.CapacityBytes
		return nil
	})
	return capacity, err
}

// CreateSnapshot implements Client; the snapshot ID is the request's name.
func (f *Fake) CreateSnapshot(ctx context.Context, req *SnapshotRequest) (*Snapshot, error) {
	if req == nil {
		return nil, fmt.Errorf("%w: CreateSnapshot: nil request", ErrInvalidRequest)
	}
	var out *Snapshot
	err := f.do(ctx, MethodCreateSnapshot, req.SourceVolumeID, func() error {
		if err := required(MethodCreateSnapshot, "source volume ID", req.SourceVolumeID, "name", req.Name); err != nil {
			return err
		}
		s := &Snapshot{ID: req.Name, SourceVolumeID: req.SourceVolumeID, ReadyToUse: true}
		f.snapshots[req.Name] = s
		copied := *s
		out = &copied
		return nil
	})
	return out, err
}

// DeleteSnapshot implements Client.
func (f *Fake) DeleteSnapshot(ctx context.Context, snapshotID string, _ map[string]string) error {
	return f.do(ctx, MethodDeleteSnapshot, snapshotID, func() error {
		delete(f.snapshots, snapshotID)
		return nil
	})
}

// NodeStage implements Client.
func (f *Fake) NodeStage(ctx context.Context, req *StageRequest) error {
	if req == nil {
		return fmt.Errorf("%w: NodeStage: nil request", ErrInvalidRequest)
	}
	return f.do(ctx, MethodNodeStage, req.VolumeID, func() error {
		if err := required(MethodNodeStage, "volume ID", req.VolumeID, "staging path", req.StagingPath); err != nil {
			return err
		}
		if err := checkCapability(MethodNodeStage, req.Capability); err != nil {
			return err
		}
		f.staged[req.VolumeID] = req.StagingPath
		return nil
	})
}

// NodeUnstage implements Client.
func (f *Fake) NodeUnstage(ctx context.Context, volumeID, stagingPath string) error {
	return f.do(ctx, MethodNodeUnstage, volumeID, func() error {
		if err := required(MethodNodeUnstage, "volume ID", volumeID, "staging path", stagingPath); err != nil {
			return err
		}
		delete(f.staged, volumeID)
		return nil
	})
}

// NodePublish implements Client.
func (f *Fake) NodePublish(ctx context.Context, req *NodePublishRequest) error {
	if req == nil {
		return fmt.Errorf("%w: NodePublish: nil request", ErrInvalidRequest)
	}
	return f.do(ctx, MethodNodePublish, req.VolumeID, func() error {
		if err := required(MethodNodePublish, "volume ID", req.VolumeID, "target path", req.TargetPath); err != nil {
			return err
		}
		if err := checkCapability(MethodNodePublish, req.Capability); err != nil {
			return err
		}
		f.targets[req.TargetPath] = req.VolumeID
		return nil
	})
}

// NodeUnpublish implements Client.
func (f *Fake) NodeUnpublish(ctx context.Context, volumeID, targetPath string) error {
	return f.do(ctx, MethodNodeUnpublish, volumeID, func() error {
		if err := required(MethodNodeUnpublish, "volume ID", volumeID, "target path", targetPath); err != nil {
			return err
		}
		delete(f.targets, targetPath)
		return nil
	})
}
