package state

import (
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// Claim modes: which slot a volume claim takes.
const (
	ModeRead  = "read"
	ModeWrite = "write"
)

// accessRule is what an access mode (messages.CSIAccess*) allows: whether
// every claim must sit on one node, and how many writers (-1: any number).
type accessRule struct {
	singleNode bool
	maxWriters int
}

var accessRules = map[string]accessRule{
	messages.CSIAccessSingleNodeReader:      {singleNode: true, maxWriters: 0},
	messages.CSIAccessSingleNodeWriter:      {singleNode: true, maxWriters: 1},
	messages.CSIAccessMultiNodeReader:       {singleNode: false, maxWriters: 0},
	messages.CSIAccessMultiNodeSingleWriter: {singleNode: false, maxWriters: 1},
	messages.CSIAccessMultiNodeMultiWriter:  {singleNode: false, maxWriters: -1},
}

// AccessModes lists every access mode, from the most to the least
// restrictive.
func AccessModes() []string {
	return []string{messages.CSIAccessSingleNodeReader, messages.CSIAccessSingleNodeWriter, messages.CSIAccessMultiNodeReader,
		messages.CSIAccessMultiNodeSingleWriter, messages.CSIAccessMultiNodeMultiWriter}
}

// Claims is a view of one volume's claims that applies the access-mode
// rules. Every claim not yet freed holds its slot: a writer that is still
// detaching blocks the next writer, and a single-node volume still
// attached to one node refuses every other node.
type Claims struct {
	vol *messages.CSIVolume
}

// ClaimsOf returns the claims view of vol.
func ClaimsOf(vol *messages.CSIVolume) Claims { return Claims{vol: vol} }

// Get returns the claim of allocID, or nil.
func (c Claims) Get(allocID string) *messages.CSIVolumeClaim {
	for _, cl := range c.vol.GetClaims() {
		if cl.GetAllocationID() == allocID {
			return cl
		}
	}
	return nil
}

// Readers counts the read claims.
func (c Claims) Readers() int { return c.count(ModeRead) }

// Writers counts the write claims.
func (c Claims) Writers() int { return c.count(ModeWrite) }

func (c Claims) count(mode string) int {
	n := 0
	for _, cl := range c.vol.GetClaims() {
		if cl.GetMode() == mode {
			n++
		}
	}
	return n
}

// Check says whether req may be claimed. It returns the allocation's
// existing claim when there is one (claims are idempotent per allocation),
// nil and nil when req is a new claim that fits, or an error naming what is
// in the way.
func (c Claims) Check(req *messages.CSIVolumeClaim) (*messages.CSIVolumeClaim, error) {
	if err := validateClaim(req); err != nil {
		return nil, err
	}
	if existing := c.Get(req.GetAllocationID()); existing != nil {
		return c.checkSame(existing, req)
	}
	if err := c.checkModes(req); err != nil {
		return nil, err
	}
	return nil, c.checkSlots(req)
}

func validateClaim(req *messages.CSIVolumeClaim) error {
	switch {
	case req.GetAllocationID() == "":
		return fmt.Errorf("%w: no allocation ID", ErrInvalidClaim)
	case req.GetNodeID() == "":
		return fmt.Errorf("%w: alloc %q: no node ID", ErrInvalidClaim, req.GetAllocationID())
	case req.GetMode() != ModeRead && req.GetMode() != ModeWrite:
		return fmt.Errorf("%w: claim mode %q (want read or write)", ErrInvalidClaim, req.GetMode())
	case !knownAccessMode(req.GetAccessMode()):
		return fmt.Errorf("%w: unknown access mode %q", ErrInvalidClaim, req.GetAccessMode())
	case !knownAttachmentMode(req.GetAttachmentMode()):
		return fmt.Errorf("%w: unknown attachment mode %q", ErrInvalidClaim, req.GetAttachmentMode())
	}
	return nil
}

func knownAccessMode(mode string) bool {
	_, ok := accessRules[mode]
	return ok
}

func knownAttachmentMode(mode string) bool {
	return mode == messages.CSIAttachFileSystem || mode == messages.CSIAttachBlockDevice
}

func (c Claims) checkSame(existing, req *messages.CSIVolumeClaim) (*messages.CSIVolumeClaim, error) {
	if existing.ClaimState() != ClaimTaken {
		return nil, fmt.Errorf("%w: volume %q, alloc %q (state %s)", ErrClaimReleasing,
			c.vol.GetID(), existing.GetAllocationID(), existing.GetState())
	}
	if existing.GetMode() != req.GetMode() || existing.GetNodeID() != req.GetNodeID() {
		return nil, c.conflict(existing, fmt.Sprintf("the allocation already holds a %s claim", existing.GetMode()))
	}
	return existing, nil
}

func (c Claims) checkModes(req *messages.CSIVolumeClaim) error {
	if !c.supports(req) {
		return fmt.Errorf("%w: volume %q has no capability %s/%s", ErrUnsupportedCapability,
			c.vol.GetID(), req.GetAccessMode(), req.GetAttachmentMode())
	}
	inUse := c.vol.GetAccessMode()
	if inUse != "" && (inUse != req.GetAccessMode() || c.vol.GetAttachmentMode() != req.GetAttachmentMode()) {
		return fmt.Errorf("%w: volume %q is in use as %s/%s, asked %s/%s", ErrModeMismatch, c.vol.GetID(),
			inUse, c.vol.GetAttachmentMode(), req.GetAccessMode(), req.GetAttachmentMode())
	}
	if req.GetMode() == ModeWrite && accessRules[req.GetAccessMode()].maxWriters == 0 {
		return fmt.Errorf("%w: volume %q is %s; alloc %q asked to write", ErrVolumeReadOnly,
			c.vol.GetID(), req.GetAccessMode(), req.GetAllocationID())
	}
	return nil
}

// supports reports whether req's modes are among the volume's requested
// capabilities; a volume that lists none accepts any.
func (c Claims) supports(req *messages.CSIVolumeClaim) bool {
	caps := c.vol.GetRequestedCapabilities()
	for _, cp := range caps {
		if cp.GetAccessMode() == req.GetAccessMode() && cp.GetAttachmentMode() == req.GetAttachmentMode() {
			return true
		}
	}
	return len(caps) == 0
}

func (c Claims) checkSlots(req *messages.CSIVolumeClaim) error {
	rule := accessRules[req.GetAccessMode()]
	for _, cl := range c.vol.GetClaims() {
		if rule.singleNode && cl.GetNodeID() != req.GetNodeID() {
			return c.conflict(cl, fmt.Sprintf("%s volume is claimed on another node", req.GetAccessMode()))
		}
		if req.GetMode() == ModeWrite && rule.maxWriters == 1 && cl.GetMode() == ModeWrite {
			return c.conflict(cl, fmt.Sprintf("%s volume already has a writer", req.GetAccessMode()))
		}
	}
	return nil
}

func (c Claims) conflict(holder *messages.CSIVolumeClaim, reason string) error {
	return &ClaimConflictError{VolumeID: c.vol.GetID(), AllocID: holder.GetAllocationID(),
		NodeID: holder.GetNodeID(), Reason: reason}
}
