package state

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// ApplyClaimVolume and ApplyUpdateClaimState apply the volume raft
// commands to a volume. The FSM applies them to its stored volumes and the
// volume actor to its own copy, so both agree on every claim. now is the
// raft Command.Time (unix nanos); 0 leaves UpdatedAt alone. On error vol
// is unchanged.

// ApplyClaimVolume adds cmd's claim to vol, in state taken, and sets the
// modes in use when it is the first claim. The claim must fit
// (Claims.Check: a conflict is a *ClaimConflictError). A claim the
// allocation already holds, taken with the same mode on the same node, is
// kept as it is: claiming is idempotent.
func ApplyClaimVolume(vol *messages.CSIVolume, cmd *messages.ClaimVolume, now int64) error {
	if cmd.GetClaim() == nil {
		return fmt.Errorf("%w: volume %q: no claim", ErrInvalidClaim, vol.GetID())
	}
	existing, err := ClaimsOf(vol).Check(cmd.GetClaim())
	if err != nil || existing != nil {
		return err
	}
	c := proto.Clone(cmd.GetClaim()).(*messages.CSIVolumeClaim)
	c.SetClaimState(ClaimTaken)
	if now != 0 {
		c.UpdatedAt = now
	}
	vol.Claims = append(vol.Claims, c)
	if len(vol.Claims) == 1 {
		vol.AccessMode = c.GetAccessMode()
		vol.AttachmentMode = c.GetAttachmentMode()
	}
	return nil
}

// ApplyUpdateClaimState moves one claim of vol to cmd's state: the same
// state (to record a publish context) or along an edge of the transition
// table. PublishContext, when set, replaces the claim's; ControllerPublished
// and NodeAbandoned, when true, are set. State freed removes the claim, and
// with the last claim gone the modes in use are cleared; freeing a claim
// that is already gone does nothing. Errors: ErrUnknownClaimState,
// ErrClaimNotFound, ErrIllegalTransition.
func ApplyUpdateClaimState(vol *messages.CSIVolume, cmd *messages.UpdateClaimState, now int64) error {
	to, err := ParseClaimState(cmd.GetState())
	if err != nil {
		return fmt.Errorf("volume %q, alloc %q: %w", vol.GetID(), cmd.GetAllocationID(), err)
	}
	i := slices.IndexFunc(vol.Claims, func(x *messages.CSIVolumeClaim) bool {
		return x.GetAllocationID() == cmd.GetAllocationID()
	})
	if i < 0 {
		if to == ClaimFreed {
			return nil
		}
		return fmt.Errorf("%w: volume %q, alloc %q", ErrClaimNotFound, vol.GetID(), cmd.GetAllocationID())
	}
	c := vol.Claims[i]
	from, err := ParseClaimState(c.GetState())
	if err != nil {
		return fmt.Errorf("volume %q, alloc %q: %w", vol.GetID(), cmd.GetAllocationID(), err)
	}
	if from != to && !claimEdge(from, to) {
		return fmt.Errorf("%w: volume %q, alloc %q: %s -> %s", ErrIllegalTransition,
			vol.GetID(), cmd.GetAllocationID(), from, to)
	}
	if to == ClaimFreed {
		vol.Claims = slices.Delete(vol.Claims, i, i+1)
		if len(vol.Claims) == 0 {
			vol.AccessMode, vol.AttachmentMode = "", ""
		}
		return nil
	}
	c.SetClaimState(to)
	if cmd.GetPublishContext() != nil {
		c.PublishContext = maps.Clone(cmd.GetPublishContext())
	}
	c.ControllerPublished = c.ControllerPublished || cmd.GetControllerPublished()
	c.NodeAbandoned = c.NodeAbandoned || cmd.GetNodeAbandoned()
	if now != 0 {
		c.UpdatedAt = now
	}
	return nil
}

// CheckVolumeUnused says whether vol may be deregistered: it has no claim
// or, with force, no taken claim (force drops the claims on their way out,
// with no controller detach). The error, ErrVolumeInUse, names the
// allocations in the way.
func CheckVolumeUnused(vol *messages.CSIVolume, force bool) error {
	var users []string
	for _, c := range vol.GetClaims() {
		if !force || c.ClaimState() == ClaimTaken {
			users = append(users, fmt.Sprintf("alloc %q (%s)", c.GetAllocationID(), c.GetState()))
		}
	}
	if len(users) > 0 {
		return fmt.Errorf("%w: volume %q is claimed by %s", ErrVolumeInUse, vol.GetID(), strings.Join(users, ", "))
	}
	return nil
}
