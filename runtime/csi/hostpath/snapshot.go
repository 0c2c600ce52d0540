package hostpath

import (
	"context"
	"os"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// snapshotSource is the snapshot a volume is created from, or "".
// Cloning from a volume is not supported.
func snapshotSource(src *csipb.VolumeContentSource) (string, error) {
	switch {
	case src == nil:
		return "", nil
	case src.GetSnapshot() != nil:
		if src.GetSnapshot().GetSnapshotId() == "" {
			return "", status.Error(codes.InvalidArgument, "snapshot ID of the content source is missing")
		}
		return src.GetSnapshot().GetSnapshotId(), nil
	}
	return "", status.Error(codes.InvalidArgument, "only snapshots can be a content source")
}

// CreateSnapshot copies the source volume into Root/.snapshots/<name>.
func (s *controller) CreateSnapshot(_ context.Context, req *csipb.CreateSnapshotRequest) (*csipb.CreateSnapshotResponse, error) {
	p, name, src := s.p, req.GetName(), req.GetSourceVolumeId()
	switch {
	case name == "":
		return nil, status.Error(codes.InvalidArgument, "name is missing")
	case src == "":
		return nil, status.Error(codes.InvalidArgument, "source volume ID is missing")
	case !validID(name):
		return nil, status.Errorf(codes.InvalidArgument, "name %q cannot name a directory", name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if snap, ok, err := p.snapshot(name); err != nil {
		return nil, internal(err)
	} else if ok {
		if snap.SourceVolumeID != src {
			return nil, status.Errorf(codes.AlreadyExists, "snapshot %q exists for volume %q", name, snap.SourceVolumeID)
		}
		return &csipb.CreateSnapshotResponse{Snapshot: csiSnapshot(snap)}, nil
	}
	if _, ok, err := p.volume(src); err != nil {
		return nil, internal(err)
	} else if !ok {
		return nil, status.Errorf(codes.NotFound, "volume %q not found", src)
	}
	snap, err := p.makeSnapshot(name, src)
	if err != nil {
		return nil, err
	}
	return &csipb.CreateSnapshotResponse{Snapshot: csiSnapshot(snap)}, nil
}

// makeSnapshot copies volume src and writes the metadata; p.mu is held.
func (p *Plugin) makeSnapshot(name, src string) (*snapshotMeta, error) {
	dir := p.snapshotDir(name)
	if err := copyTree(p.volumeDir(src), dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, internal(err)
	}
	size, err := treeSize(dir)
	if err != nil {
		return nil, internal(err)
	}
	snap := &snapshotMeta{ID: name, SourceVolumeID: src, SizeBytes: size, CreatedUnixNano: time.Now().UnixNano()}
	if err := p.writeMeta(kindSnapshot, name, snap); err != nil {
		return nil, internal(err)
	}
	p.log.Info("hostpath: snapshot created", "snapshot", name, "volume", src)
	return snap, nil
}

func csiSnapshot(s *snapshotMeta) *csipb.Snapshot {
	return &csipb.Snapshot{
		SnapshotId:     s.ID,
		SourceVolumeId: s.SourceVolumeID,
		SizeBytes:      s.SizeBytes,
		CreationTime:   timestamppb.New(time.Unix(0, s.CreatedUnixNano)),
		ReadyToUse:     true,
	}
}

// DeleteSnapshot removes a snapshot; an unknown one succeeds.
func (s *controller) DeleteSnapshot(_ context.Context, req *csipb.DeleteSnapshotRequest) (*csipb.DeleteSnapshotResponse, error) {
	p, id := s.p, req.GetSnapshotId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "snapshot ID is missing")
	}
	if !validID(id) {
		return &csipb.DeleteSnapshotResponse{}, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := os.RemoveAll(p.snapshotDir(id)); err != nil {
		return nil, internal(err)
	}
	if err := p.removeMeta(kindSnapshot, id); err != nil {
		return nil, internal(err)
	}
	return &csipb.DeleteSnapshotResponse{}, nil
}
