package volume

import (
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// The claim rules (access modes, Claims.Check, the claim state table) live
// in cluster/state, next to the FSM that applies the volume commands with
// them; these names keep this package's spelling.

// Access modes, as Nomad spells them.
const (
	AccessSingleNodeReader      = state.AccessSingleNodeReader
	AccessSingleNodeWriter      = state.AccessSingleNodeWriter
	AccessMultiNodeReader       = state.AccessMultiNodeReader
	AccessMultiNodeSingleWriter = state.AccessMultiNodeSingleWriter
	AccessMultiNodeMultiWriter  = state.AccessMultiNodeMultiWriter
)

// Attachment modes, as Nomad spells them.
const (
	AttachFilesystem  = state.AttachFilesystem
	AttachBlockDevice = state.AttachBlockDevice
)

// Claim modes: which slot a claim takes.
const (
	ModeRead  = state.ModeRead
	ModeWrite = state.ModeWrite
)

// Claims is state.Claims: a volume's claims under the access-mode rules
// (state.ClaimsOf(vol).Check(req)).
type Claims = state.Claims

// ClaimMode is the slot a volume request takes: read_only requests read.
func ClaimMode(readOnly bool) string {
	if readOnly {
		return ModeRead
	}
	return ModeWrite
}

// NewClaim is the claim an allocation on nodeID asks for to satisfy req.
func NewClaim(allocID, nodeID, externalNodeID string, req *messages.VolumeRequest) *messages.CSIVolumeClaim {
	return &messages.CSIVolumeClaim{
		AllocationID:   allocID,
		NodeID:         nodeID,
		ExternalNodeID: externalNodeID,
		Mode:           ClaimMode(req.GetReadOnly()),
		AccessMode:     req.GetAccessMode(),
		AttachmentMode: req.GetAttachmentMode(),
	}
}
