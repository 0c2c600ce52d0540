package hostpath

import (
	"context"
	"slices"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ControllerPublishVolume records the attachment in memory. It answers
// NotFound for an unknown volume or node, AlreadyExists when the volume
// is attached to the node read-only the other way, and FailedPrecondition
// when a single-node volume is attached elsewhere.
func (s *controller) ControllerPublishVolume(_ context.Context, req *csipb.ControllerPublishVolumeRequest) (*csipb.ControllerPublishVolumeResponse, error) {
	p, id, nodeID := s.p, req.GetVolumeId(), req.GetNodeId()
	switch {
	case id == "":
		return nil, status.Error(codes.InvalidArgument, "volume ID is missing")
	case nodeID == "":
		return nil, status.Error(codes.InvalidArgument, "node ID is missing")
	}
	if err := checkCapabilities(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok, err := p.volume(id); err != nil {
		return nil, internal(err)
	} else if !ok {
		return nil, status.Errorf(codes.NotFound, "volume %q not found", id)
	}
	if len(p.cfg.Nodes) > 0 && !slices.Contains(p.cfg.Nodes, nodeID) {
		return nil, status.Errorf(codes.NotFound, "node %q not found", nodeID)
	}
	want := attachment{readOnly: req.GetReadonly(), singleNode: singleNode(req.GetVolumeCapability())}
	if err := p.canAttach(id, nodeID, want); err != nil {
		return nil, err
	}
	if p.attach[id] == nil {
		p.attach[id] = map[string]attachment{}
	}
	p.attach[id][nodeID] = want
	p.log.Info("hostpath: volume published", "volume", id, "node", nodeID, "read_only", want.readOnly)
	return &csipb.ControllerPublishVolumeResponse{PublishContext: map[string]string{
		"path": p.volumeDir(id), "node": nodeID}}, nil
}

// canAttach checks a new attachment against the existing ones; p.mu is
// held.
func (p *Plugin) canAttach(id, nodeID string, want attachment) error {
	for other, a := range p.attach[id] {
		switch {
		case other == nodeID && a.readOnly != want.readOnly:
			return status.Errorf(codes.AlreadyExists,
				"volume %q is published to node %q with read_only=%t", id, nodeID, a.readOnly)
		case other != nodeID && (a.singleNode || want.singleNode):
			return status.Errorf(codes.FailedPrecondition,
				"volume %q is published to node %q and allows a single node", id, other)
		}
	}
	return nil
}

// ControllerUnpublishVolume forgets the attachment: from nodeID, or from
// every node when nodeID is empty. An unknown volume is NotFound (or
// success with Config.UnpublishUnknownOK); a volume that is not attached
// to the node succeeds.
func (s *controller) ControllerUnpublishVolume(_ context.Context, req *csipb.ControllerUnpublishVolumeRequest) (*csipb.ControllerUnpublishVolumeResponse, error) {
	p, id, nodeID := s.p, req.GetVolumeId(), req.GetNodeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is missing")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok, err := p.volume(id); err != nil {
		return nil, internal(err)
	} else if !ok {
		if p.cfg.UnpublishUnknownOK {
			return &csipb.ControllerUnpublishVolumeResponse{}, nil
		}
		return nil, status.Errorf(codes.NotFound, "volume %q not found", id)
	}
	if nodeID == "" {
		delete(p.attach, id)
	} else {
		delete(p.attach[id], nodeID)
	}
	p.log.Info("hostpath: volume unpublished", "volume", id, "node", nodeID)
	return &csipb.ControllerUnpublishVolumeResponse{}, nil
}
