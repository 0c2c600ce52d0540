package hostpath

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// StagedMarker is the file NodeStageVolume writes into the staging
// directory; it holds the volume ID.
const StagedMarker = ".hostpath-staged"

// node is the CSI Node service.
type node struct {
	csipb.UnimplementedNodeServer
	p *Plugin
}

func (s *node) NodeGetInfo(context.Context, *csipb.NodeGetInfoRequest) (*csipb.NodeGetInfoResponse, error) {
	resp := &csipb.NodeGetInfoResponse{NodeId: s.p.cfg.NodeID, MaxVolumesPerNode: s.p.cfg.MaxVolumesPerNode}
	if len(s.p.cfg.Topology) > 0 {
		resp.AccessibleTopology = &csipb.Topology{Segments: s.p.cfg.Topology}
	}
	return resp, nil
}

func (s *node) NodeGetCapabilities(context.Context, *csipb.NodeGetCapabilitiesRequest) (*csipb.NodeGetCapabilitiesResponse, error) {
	return &csipb.NodeGetCapabilitiesResponse{Capabilities: []*csipb.NodeServiceCapability{{
		Type: &csipb.NodeServiceCapability_Rpc{Rpc: &csipb.NodeServiceCapability_RPC{
			Type: csipb.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME}}}}}, nil
}

// NodeStageVolume creates the staging directory and writes StagedMarker
// into it. Staging the same volume again succeeds.
func (s *node) NodeStageVolume(_ context.Context, req *csipb.NodeStageVolumeRequest) (*csipb.NodeStageVolumeResponse, error) {
	p, id, staging := s.p, req.GetVolumeId(), req.GetStagingTargetPath()
	switch {
	case id == "":
		return nil, status.Error(codes.InvalidArgument, "volume ID is missing")
	case staging == "":
		return nil, status.Error(codes.InvalidArgument, "staging target path is missing")
	}
	if err := checkCapabilities(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.mustExist(id); err != nil {
		return nil, err
	}
	marker := filepath.Join(staging, StagedMarker)
	if b, err := os.ReadFile(marker); err == nil {
		if string(b) != id {
			return nil, status.Errorf(codes.AlreadyExists, "%s already stages volume %q", staging, b)
		}
		return &csipb.NodeStageVolumeResponse{}, nil
	}
	if err := os.MkdirAll(staging, 0o755); err != nil {
		return nil, internal(err)
	}
	if err := os.WriteFile(marker, []byte(id), 0o644); err != nil {
		return nil, internal(err)
	}
	p.log.Info("hostpath: volume staged", "volume", id, "staging", staging)
	return &csipb.NodeStageVolumeResponse{}, nil
}

// NodeUnstageVolume removes StagedMarker; a volume that is not staged
// succeeds. It fails with FailedPrecondition while the volume is still
// published on this node, as a real device would be busy.
func (s *node) NodeUnstageVolume(_ context.Context, req *csipb.NodeUnstageVolumeRequest) (*csipb.NodeUnstageVolumeResponse, error) {
	p, id, staging := s.p, req.GetVolumeId(), req.GetStagingTargetPath()
	switch {
	case id == "":
		return nil, status.Error(codes.InvalidArgument, "volume ID is missing")
	case staging == "":
		return nil, status.Error(codes.InvalidArgument, "staging target path is missing")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if target := p.targetOf(id); target != "" {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %q is still published at %s", id, target)
	}
	marker := filepath.Join(staging, StagedMarker)
	if b, err := os.ReadFile(marker); err == nil && string(b) == id {
		if err := os.Remove(marker); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, internal(err)
		}
		p.log.Info("hostpath: volume unstaged", "volume", id, "staging", staging)
	}
	return &csipb.NodeUnstageVolumeResponse{}, nil
}

// NodePublishVolume makes the target a bind mount of the volume's
// directory (read-only when asked) as root, or a symlink to it otherwise.
// The volume must be staged at the staging path.
func (s *node) NodePublishVolume(_ context.Context, req *csipb.NodePublishVolumeRequest) (*csipb.NodePublishVolumeResponse, error) {
	p, id := s.p, req.GetVolumeId()
	if err := checkPublish(req); err != nil {
		return nil, err
	}
	target := filepath.Clean(req.GetTargetPath())
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.mustExist(id); err != nil {
		return nil, err
	}
	if b, err := os.ReadFile(filepath.Join(req.GetStagingTargetPath(), StagedMarker)); err != nil || string(b) != id {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %q is not staged at %s", id, req.GetStagingTargetPath())
	}
	want := publication{volumeID: id, readOnly: req.GetReadonly()}
	if have, ok := p.targets[target]; ok {
		if have != want {
			return nil, status.Errorf(codes.AlreadyExists, "%s already publishes volume %q (read_only=%t)", target, have.volumeID, have.readOnly)
		}
		return &csipb.NodePublishVolumeResponse{}, nil
	}
	if !publishedAt(p.volumeDir(id), target) {
		if err := p.mountTarget(p.volumeDir(id), target, want.readOnly); err != nil {
			return nil, internal(err)
		}
	}
	p.targets[target] = want
	p.log.Info("hostpath: volume published on node", "volume", id, "target", target, "read_only", want.readOnly)
	return &csipb.NodePublishVolumeResponse{}, nil
}

func checkPublish(req *csipb.NodePublishVolumeRequest) error {
	switch {
	case req.GetVolumeId() == "":
		return status.Error(codes.InvalidArgument, "volume ID is missing")
	case req.GetTargetPath() == "":
		return status.Error(codes.InvalidArgument, "target path is missing")
	case req.GetStagingTargetPath() == "":
		return status.Error(codes.InvalidArgument, "staging target path is missing (the plugin has STAGE_UNSTAGE_VOLUME)")
	}
	return checkCapabilities(req.GetVolumeCapability())
}

// NodeUnpublishVolume unmounts the target (or removes the symlink) and
// removes it. A target that is already gone succeeds, as the spec's
// idempotency rule requires.
func (s *node) NodeUnpublishVolume(_ context.Context, req *csipb.NodeUnpublishVolumeRequest) (*csipb.NodeUnpublishVolumeResponse, error) {
	p, id := s.p, req.GetVolumeId()
	switch {
	case id == "":
		return nil, status.Error(codes.InvalidArgument, "volume ID is missing")
	case req.GetTargetPath() == "":
		return nil, status.Error(codes.InvalidArgument, "target path is missing")
	}
	target := filepath.Clean(req.GetTargetPath())
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.unmountTarget(target); err != nil {
		return nil, internal(err)
	}
	delete(p.targets, target)
	p.log.Info("hostpath: volume unpublished on node", "volume", id, "target", target)
	return &csipb.NodeUnpublishVolumeResponse{}, nil
}

// mustExist answers NotFound for a volume without a directory; p.mu is
// held.
func (p *Plugin) mustExist(id string) error {
	if _, ok, err := p.volume(id); err != nil {
		return internal(err)
	} else if !ok {
		return status.Errorf(codes.NotFound, "volume %q not found", id)
	}
	return nil
}

// targetOf is a target where volume id is published, or ""; p.mu is held.
func (p *Plugin) targetOf(id string) string {
	for target, pub := range p.targets {
		if pub.volumeID == id {
			return target
		}
	}
	return ""
}
