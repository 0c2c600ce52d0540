package volume

import (
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// The claim rules (access modes, state.Claims.Check, the claim state
// table) and their errors live in cluster/state, next to the FSM that
// applies the volume commands with them; the modes' names are messages'
// (messages.CSIAccessSingleNodeWriter, ...). This package uses them by
// those names.

// claimMode is the slot a volume request takes: read_only requests read.
func claimMode(readOnly bool) string {
	if readOnly {
		return state.ModeRead
	}
	return state.ModeWrite
}

// newClaim is the claim an allocation on nodeID asks for to satisfy req.
func newClaim(allocID, nodeID, externalNodeID string, req *messages.VolumeRequest) *messages.CSIVolumeClaim {
	return &messages.CSIVolumeClaim{
		AllocationID:   allocID,
		NodeID:         nodeID,
		ExternalNodeID: externalNodeID,
		Mode:           claimMode(req.GetReadOnly()),
		AccessMode:     req.GetAccessMode(),
		AttachmentMode: req.GetAttachmentMode(),
	}
}
