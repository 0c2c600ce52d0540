package state

import "github.com/troupe-dev/troupe/messages"

// NewClaim is the claim an allocation on nodeID asks for to satisfy req:
// a read_only request takes a read slot, any other a write slot. The
// client's alloc actor sends it; the volume actor checks it.
func NewClaim(allocID, nodeID, externalNodeID string, req *messages.VolumeRequest) *messages.CSIVolumeClaim {
	mode := ModeWrite
	if req.GetReadOnly() {
		mode = ModeRead
	}
	return &messages.CSIVolumeClaim{
		AllocationID:   allocID,
		NodeID:         nodeID,
		ExternalNodeID: externalNodeID,
		Mode:           mode,
		AccessMode:     req.GetAccessMode(),
		AttachmentMode: req.GetAttachmentMode(),
	}
}
