package agent

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi"
)

// runController runs one controller RPC on the controller plugin
// listening on socket (node.ClientSpec.RunController). The answer always
// comes back as a response: a gRPC error becomes its code name, so the
// leader's controller actor can tell Unavailable (try another instance)
// from NotFound (done) from the rest.
func runController(ctx context.Context, socket string, req *messages.ControllerRequest) *messages.ControllerResponse {
	c, err := csi.Dial(ctx, socket)
	if err != nil {
		return controllerError(err)
	}
	defer c.Close()
	op, vol := req.GetOp(), req.GetVolume()
	out := &messages.ControllerResponse{}
	switch op.GetKind() {
	case "create-volume":
		v, err := c.CreateVolume(ctx, createRequest(vol))
		if err != nil {
			return controllerError(err)
		}
		out.Volume = &messages.CSIVolume{ExternalID: v.ID, Capacity: v.CapacityBytes, Context: v.Context}
		for _, t := range v.Topologies {
			out.Volume.Topologies = append(out.Volume.Topologies, &messages.CSITopology{Segments: t})
		}
	case "controller-publish":
		pub, err := publishRequest(op, vol)
		if err != nil {
			return &messages.ControllerResponse{Code: codes.InvalidArgument.String(), Message: err.Error()}
		}
		if out.PublishContext, err = c.ControllerPublish(ctx, pub); err != nil {
			return controllerError(err)
		}
	case "controller-unpublish":
		err = c.ControllerUnpublish(ctx, op.GetExternalVolumeID(), op.GetExternalNodeID(), vol.GetSecrets())
	case "controller-expand":
		_, err = c.ControllerExpand(ctx, op.GetExternalVolumeID(), op.GetCapacityMin(), vol.GetSecrets())
	case "delete-volume":
		err = c.DeleteVolume(ctx, op.GetExternalVolumeID(), vol.GetSecrets())
	case "create-snapshot":
		_, err = c.CreateSnapshot(ctx, &csi.SnapshotRequest{SourceVolumeID: op.GetExternalVolumeID(),
			Name: op.GetSnapshotID(), Secrets: vol.GetSecrets()})
	case "delete-snapshot":
		err = c.DeleteSnapshot(ctx, op.GetSnapshotID(), vol.GetSecrets())
	default:
		return &messages.ControllerResponse{Code: codes.Unimplemented.String(),
			Message: fmt.Sprintf("unknown controller operation %q", op.GetKind())}
	}
	if err != nil {
		return controllerError(err)
	}
	return out
}

func controllerError(err error) *messages.ControllerResponse {
	return &messages.ControllerResponse{Code: csi.Code(err).String(), Message: err.Error()}
}

// createRequest is CreateVolume for a volume spec (`volume create`).
func createRequest(v *messages.CSIVolume) *csi.CreateRequest {
	req := &csi.CreateRequest{Name: v.GetName(), RequiredBytes: v.GetRequestedCapacityMin(),
		LimitBytes: v.GetRequestedCapacityMax(), Parameters: v.GetParameters(), Secrets: v.GetSecrets(),
		SnapshotID: v.GetSnapshotID(), SourceVolumeID: v.GetCloneID()}
	if req.Name == "" {
		req.Name = v.GetID()
	}
	for _, c := range v.GetRequestedCapabilities() {
		req.Capabilities = append(req.Capabilities, capability(v, c.GetAccessMode(), c.GetAttachmentMode()))
	}
	for _, t := range v.GetRequestedTopologies().GetRequired() {
		req.RequisiteTopologies = append(req.RequisiteTopologies, t.GetSegments())
	}
	for _, t := range v.GetRequestedTopologies().GetPreferred() {
		req.PreferredTopologies = append(req.PreferredTopologies, t.GetSegments())
	}
	return req
}

// publishRequest is ControllerPublish for the op's claim, with the
// claim's modes.
func publishRequest(op *messages.ControllerOp, v *messages.CSIVolume) (*csi.PublishRequest, error) {
	var claim *messages.CSIVolumeClaim
	for _, c := range v.GetClaims() {
		if c.GetAllocationID() == op.GetAllocationID() {
			claim = c
		}
	}
	if claim == nil {
		return nil, fmt.Errorf("volume %q has no claim for allocation %q", v.GetID(), op.GetAllocationID())
	}
	return &csi.PublishRequest{VolumeID: op.GetExternalVolumeID(), NodeID: op.GetExternalNodeID(),
		Capability: capability(v, claim.GetAccessMode(), claim.GetAttachmentMode()),
		ReadOnly:   claim.GetMode() == "read", Secrets: v.GetSecrets(), VolumeContext: v.GetContext()}, nil
}

func capability(v *messages.CSIVolume, access, attachment string) *csi.VolumeCapability {
	return &csi.VolumeCapability{AccessMode: access, AttachmentMode: attachment,
		FSType: v.GetMountOptions().GetFSType(), MountFlags: v.GetMountOptions().GetMountFlags()}
}
