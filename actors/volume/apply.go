package volume

import (
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// These functions apply the volume raft commands to a stored volume. They
// import only messages on purpose: the FSM must apply commands exactly as
// VolumeState predicts them, so the integrator can move this file next to
// the FSM (cluster/state) and have both call it. now is the raft
// Command.Time (unix nanos); 0 leaves UpdatedAt alone.

// ApplyClaimVolume adds cmd's claim to vol (replacing a claim of the same
// allocation) and sets the modes in use when it is the first claim.
func ApplyClaimVolume(vol *messages.CSIVolume, cmd *messages.ClaimVolume, now int64) {
	c := proto.Clone(cmd.GetClaim()).(*messages.CSIVolumeClaim)
	if c.State == "" {
		c.State = StateTaken.String()
	}
	if now != 0 {
		c.UpdatedAt = now
	}
	vol.Claims = slices.DeleteFunc(vol.Claims, func(x *messages.CSIVolumeClaim) bool {
		return x.GetAllocationID() == c.GetAllocationID()
	})
	vol.Claims = append(vol.Claims, c)
	if len(vol.Claims) == 1 {
		vol.AccessMode = c.GetAccessMode()
		vol.AttachmentMode = c.GetAttachmentMode()
	}
}

// ApplyUpdateClaimState moves one claim of vol to cmd's state. State freed
// removes it; with the last claim gone the modes in use are cleared. It
// reports whether the claim was found.
func ApplyUpdateClaimState(vol *messages.CSIVolume, cmd *messages.UpdateClaimState, now int64) bool {
	i := slices.IndexFunc(vol.Claims, func(x *messages.CSIVolumeClaim) bool {
		return x.GetAllocationID() == cmd.GetAllocationID()
	})
	if i < 0 {
		return false
	}
	if cmd.GetState() == StateFreed.String() {
		vol.Claims = slices.Delete(vol.Claims, i, i+1)
		if len(vol.Claims) == 0 {
			vol.AccessMode, vol.AttachmentMode = "", ""
		}
		return true
	}
	c := vol.Claims[i]
	c.State = cmd.GetState()
	if cmd.GetPublishContext() != nil {
		c.PublishContext = maps.Clone(cmd.GetPublishContext())
	}
	c.ControllerPublished = c.ControllerPublished || cmd.GetControllerPublished()
	c.NodeAbandoned = c.NodeAbandoned || cmd.GetNodeAbandoned()
	if now != 0 {
		c.UpdatedAt = now
	}
	return true
}
