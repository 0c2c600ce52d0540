package volume

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// testVolume is a registered volume with every access mode as capability.
func testVolume(id string, controllerRequired bool) *messages.CSIVolume {
	v := &messages.CSIVolume{ID: id, Name: id, Namespace: "default", ExternalID: "ext-" + id,
		PluginID: "hostpath", ControllerRequired: controllerRequired, Schedulable: true}
	for _, mode := range state.AccessModes() {
		v.RequestedCapabilities = append(v.RequestedCapabilities,
			&messages.CSIVolumeCapability{AccessMode: mode, AttachmentMode: messages.CSIAttachFileSystem})
	}
	return v
}

func testClaim(alloc, node, mode, access string) *messages.CSIVolumeClaim {
	return &messages.CSIVolumeClaim{AllocationID: alloc, NodeID: node, ExternalNodeID: "ext-" + node,
		Mode: mode, AccessMode: access, AttachmentMode: messages.CSIAttachFileSystem}
}

// step runs one input and fails the test on error.
func step(t *testing.T, s *volumeState, in input) effects {
	t.Helper()
	e, err := s.Step(in)
	require.NoError(t, err, "%T", in)
	return e
}

// states maps alloc -> claim state of s's volume.
func states(s *volumeState) map[string]string {
	out := map[string]string{}
	for _, c := range s.Volume().GetClaims() {
		out[c.GetAllocationID()] = c.GetState()
	}
	return out
}

// proposedStates lists "alloc:state" for each proposal, in order.
func proposedStates(e effects) []string {
	var out []string
	for _, p := range e.Propose {
		switch {
		case p.Claim != nil:
			out = append(out, p.Claim.GetClaim().GetAllocationID()+":claim")
		case p.UpdateClaim != nil:
			out = append(out, p.UpdateClaim.GetAllocationID()+":"+p.UpdateClaim.GetState())
		case p.Deregister != nil:
			out = append(out, "deregister")
		}
	}
	return out
}

// opNames lists "kind alloc" for each op.
func opNames(ops []*messages.ControllerOp) []string {
	var out []string
	for _, op := range ops {
		out = append(out, op.GetKind()+" "+op.GetAllocationID())
	}
	return out
}
