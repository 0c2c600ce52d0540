package hostpath

import (
	"context"
	"os"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DefaultCapacity is the capacity of a volume created without a range.
const DefaultCapacity int64 = 1 << 30

// controller is the CSI Controller service.
type controller struct {
	csipb.UnimplementedControllerServer
	p *Plugin
}

// attachment is one ControllerPublish of a volume to a node, in memory.
type attachment struct {
	readOnly   bool
	singleNode bool
}

func rpcCap(t csipb.ControllerServiceCapability_RPC_Type) *csipb.ControllerServiceCapability {
	return &csipb.ControllerServiceCapability{Type: &csipb.ControllerServiceCapability_Rpc{
		Rpc: &csipb.ControllerServiceCapability_RPC{Type: t}}}
}

func (s *controller) ControllerGetCapabilities(context.Context, *csipb.ControllerGetCapabilitiesRequest) (*csipb.ControllerGetCapabilitiesResponse, error) {
	return &csipb.ControllerGetCapabilitiesResponse{Capabilities: []*csipb.ControllerServiceCapability{
		rpcCap(csipb.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME),
		rpcCap(csipb.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME),
		rpcCap(csipb.ControllerServiceCapability_RPC_PUBLISH_READONLY),
		rpcCap(csipb.ControllerServiceCapability_RPC_EXPAND_VOLUME),
		rpcCap(csipb.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT),
	}}, nil
}

// capacityFor picks the capacity for a range: required, else limit, else
// DefaultCapacity.
func capacityFor(r *csipb.CapacityRange) (int64, error) {
	req, lim := r.GetRequiredBytes(), r.GetLimitBytes()
	switch {
	case req < 0 || lim < 0:
		return 0, status.Error(codes.InvalidArgument, "negative capacity")
	case lim > 0 && req > lim:
		return 0, status.Errorf(codes.OutOfRange, "required %d exceeds limit %d", req, lim)
	case req > 0:
		return req, nil
	case lim > 0:
		return lim, nil
	}
	return DefaultCapacity, nil
}

// fits reports whether an existing capacity satisfies a range.
func fits(capacity int64, r *csipb.CapacityRange) bool {
	return capacity >= r.GetRequiredBytes() && (r.GetLimitBytes() == 0 || capacity <= r.GetLimitBytes())
}

func (s *controller) CreateVolume(_ context.Context, req *csipb.CreateVolumeRequest) (*csipb.CreateVolumeResponse, error) {
	p := s.p
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name is missing")
	}
	if !validID(req.GetName()) {
		return nil, status.Errorf(codes.InvalidArgument, "name %q cannot name a directory", req.GetName())
	}
	if err := checkCapabilities(req.GetVolumeCapabilities()...); err != nil {
		return nil, err
	}
	capacity, err := capacityFor(req.GetCapacityRange())
	if err != nil {
		return nil, err
	}
	snapID, err := snapshotSource(req.GetVolumeContentSource())
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok, err := p.volume(req.GetName())
	if err != nil {
		return nil, internal(err)
	}
	if ok {
		if !fits(v.CapacityBytes, req.GetCapacityRange()) || v.SnapshotID != snapID {
			return nil, status.Errorf(codes.AlreadyExists, "volume %q exists with capacity %d", v.ID, v.CapacityBytes)
		}
		return &csipb.CreateVolumeResponse{Volume: p.csiVolume(v, req.GetVolumeContentSource())}, nil
	}
	v = &volumeMeta{ID: req.GetName(), CapacityBytes: capacity, SnapshotID: snapID,
		Topology: p.topologyFor(req.GetAccessibilityRequirements())}
	if err := p.makeVolume(v); err != nil {
		return nil, err
	}
	p.log.Info("hostpath: volume created", "volume", v.ID, "capacity", v.CapacityBytes)
	return &csipb.CreateVolumeResponse{Volume: p.csiVolume(v, req.GetVolumeContentSource())}, nil
}

// makeVolume creates the volume's directory (from its snapshot, if any)
// and metadata; p.mu is held.
func (p *Plugin) makeVolume(v *volumeMeta) error {
	dir := p.volumeDir(v.ID)
	if v.SnapshotID != "" {
		if _, ok, err := p.snapshot(v.SnapshotID); err != nil {
			return internal(err)
		} else if !ok {
			return status.Errorf(codes.NotFound, "snapshot %q not found", v.SnapshotID)
		}
		if err := copyTree(p.snapshotDir(v.SnapshotID), dir); err != nil {
			_ = os.RemoveAll(dir)
			return internal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return internal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil { // tasks of any user may write
		return internal(err)
	}
	if err := p.writeMeta(kindVolume, v.ID, v); err != nil {
		return internal(err)
	}
	return nil
}

func (p *Plugin) csiVolume(v *volumeMeta, src *csipb.VolumeContentSource) *csipb.Volume {
	out := &csipb.Volume{VolumeId: v.ID, CapacityBytes: v.CapacityBytes, ContentSource: src,
		VolumeContext: map[string]string{"path": p.volumeDir(v.ID)}}
	switch {
	case len(v.Topology) > 0:
		out.AccessibleTopology = []*csipb.Topology{{Segments: v.Topology}}
	case len(p.cfg.Topology) > 0: // a volume made before it kept its own
		out.AccessibleTopology = []*csipb.Topology{{Segments: p.cfg.Topology}}
	}
	return out
}

// topologyFor is where a new volume will be accessible from: the first
// preferred topology of the request, else its first requisite one, else
// (no requirements) this instance's own topology. A plugin without a
// topology has none to honour, and its volumes are accessible everywhere.
func (p *Plugin) topologyFor(r *csipb.TopologyRequirement) map[string]string {
	if len(p.cfg.Topology) == 0 {
		return nil
	}
	for _, ts := range [][]*csipb.Topology{r.GetPreferred(), r.GetRequisite()} {
		if len(ts) > 0 && len(ts[0].GetSegments()) > 0 {
			return ts[0].GetSegments()
		}
	}
	return p.cfg.Topology
}

func (s *controller) DeleteVolume(_ context.Context, req *csipb.DeleteVolumeRequest) (*csipb.DeleteVolumeResponse, error) {
	p, id := s.p, req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is missing")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok, err := p.volume(id); err != nil {
		return nil, internal(err)
	} else if !ok {
		return &csipb.DeleteVolumeResponse{}, nil
	}
	if len(p.attach[id]) > 0 {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %q is still published to %d node(s)", id, len(p.attach[id]))
	}
	if target := p.targetOf(id); target != "" {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %q is still published at %s", id, target)
	}
	if err := os.RemoveAll(p.volumeDir(id)); err != nil {
		return nil, internal(err)
	}
	if err := p.removeMeta(kindVolume, id); err != nil {
		return nil, internal(err)
	}
	p.log.Info("hostpath: volume deleted", "volume", id)
	return &csipb.DeleteVolumeResponse{}, nil
}

func (s *controller) ControllerExpandVolume(_ context.Context, req *csipb.ControllerExpandVolumeRequest) (*csipb.ControllerExpandVolumeResponse, error) {
	p, id := s.p, req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is missing")
	}
	if req.GetCapacityRange() == nil {
		return nil, status.Error(codes.InvalidArgument, "capacity range is missing")
	}
	capacity, err := capacityFor(req.GetCapacityRange())
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok, err := p.volume(id)
	if err != nil {
		return nil, internal(err)
	} else if !ok {
		return nil, status.Errorf(codes.NotFound, "volume %q not found", id)
	}
	if capacity > v.CapacityBytes {
		v.CapacityBytes = capacity
		if err := p.writeMeta(kindVolume, id, v); err != nil {
			return nil, internal(err)
		}
	}
	return &csipb.ControllerExpandVolumeResponse{CapacityBytes: v.CapacityBytes}, nil
}

func (s *controller) ValidateVolumeCapabilities(_ context.Context, req *csipb.ValidateVolumeCapabilitiesRequest) (*csipb.ValidateVolumeCapabilitiesResponse, error) {
	p, id := s.p, req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is missing")
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "volume capabilities are missing")
	}
	p.mu.Lock()
	_, ok, err := p.volume(id)
	p.mu.Unlock()
	if err != nil {
		return nil, internal(err)
	} else if !ok {
		return nil, status.Errorf(codes.NotFound, "volume %q not found", id)
	}
	if err := checkCapabilities(req.GetVolumeCapabilities()...); err != nil {
		return &csipb.ValidateVolumeCapabilitiesResponse{Message: err.Error()}, nil
	}
	return &csipb.ValidateVolumeCapabilitiesResponse{Confirmed: &csipb.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext:      req.GetVolumeContext(),
		VolumeCapabilities: req.GetVolumeCapabilities(),
		Parameters:         req.GetParameters(),
	}}, nil
}
