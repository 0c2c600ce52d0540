package csi

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"

	"github.com/troupe-dev/troupe/messages"
)

// RunController runs one controller RPC, routed by the leader, on the
// controller plugin listening on socket (node.ClientSpec.RunController).
func RunController(ctx context.Context, socket string, req *messages.ControllerRequest) *messages.ControllerResponse {
	c, err := Dial(ctx, socket)
	if err != nil {
		return controllerError(err)
	}
	defer c.Close()
	return RunControllerOn(ctx, c, req)
}

// controllerCall runs one kind of controller operation on a plugin.
type controllerCall func(ctx context.Context, c Client, op *messages.ControllerOp, vol *messages.CSIVolume) *messages.ControllerResponse

// controllerCalls maps each controller operation to its plugin call.
var controllerCalls = map[messages.ControllerOpKind]controllerCall{
	messages.ControllerCreateVolume: createVolume,
	messages.ControllerPublish:      controllerPublish,
	messages.ControllerUnpublish: func(ctx context.Context, c Client, op *messages.ControllerOp, vol *messages.CSIVolume) *messages.ControllerResponse {
		return done(c.ControllerUnpublish(ctx, op.GetExternalVolumeID(), op.GetExternalNodeID(), vol.GetSecrets()))
	},
	messages.ControllerExpand: func(ctx context.Context, c Client, op *messages.ControllerOp, vol *messages.CSIVolume) *messages.ControllerResponse {
		_, err := c.ControllerExpand(ctx, op.GetExternalVolumeID(), op.GetCapacityMin(), vol.GetSecrets())
		return done(err)
	},
	messages.ControllerDeleteVolume: func(ctx context.Context, c Client, op *messages.ControllerOp, vol *messages.CSIVolume) *messages.ControllerResponse {
		return done(c.DeleteVolume(ctx, op.GetExternalVolumeID(), vol.GetSecrets()))
	},
	messages.ControllerCreateSnapshot: func(ctx context.Context, c Client, op *messages.ControllerOp, vol *messages.CSIVolume) *messages.ControllerResponse {
		_, err := c.CreateSnapshot(ctx, &SnapshotRequest{SourceVolumeID: op.GetExternalVolumeID(),
			Name: op.GetSnapshotID(), Secrets: vol.GetSecrets()})
		return done(err)
	},
	messages.ControllerDeleteSnapshot: func(ctx context.Context, c Client, op *messages.ControllerOp, vol *messages.CSIVolume) *messages.ControllerResponse {
		return done(c.DeleteSnapshot(ctx, op.GetSnapshotID(), vol.GetSecrets()))
	},
}

// RunControllerOn runs one controller RPC on plugin c. The answer always
// comes back as a response: a gRPC error becomes its code name, so the
// leader's controller actor can tell Unavailable (try another instance)
// from NotFound (done) from the rest; an unknown operation is
// Unimplemented.
func RunControllerOn(ctx context.Context, c Client, req *messages.ControllerRequest) *messages.ControllerResponse {
	op := req.GetOp()
	call, ok := controllerCalls[op.OpKind()]
	if !ok {
		return messages.ControllerResult(codes.Unimplemented, fmt.Sprintf("unknown controller operation %q", op.GetKind()))
	}
	return call(ctx, c, op, req.GetVolume())
}

func createVolume(ctx context.Context, c Client, _ *messages.ControllerOp, vol *messages.CSIVolume) *messages.ControllerResponse {
	v, err := c.CreateVolume(ctx, createRequest(vol))
	if err != nil {
		return controllerError(err)
	}
	out := &messages.ControllerResponse{Volume: &messages.CSIVolume{ExternalID: v.ID, Capacity: v.CapacityBytes, Context: v.Context}}
	for _, t := range v.Topologies {
		out.Volume.Topologies = append(out.Volume.Topologies, &messages.CSITopology{Segments: t})
	}
	return out
}

func controllerPublish(ctx context.Context, c Client, op *messages.ControllerOp, vol *messages.CSIVolume) *messages.ControllerResponse {
	pub, err := publishRequest(op, vol)
	if err != nil {
		return messages.ControllerResult(codes.InvalidArgument, err.Error())
	}
	pc, err := c.ControllerPublish(ctx, pub)
	if err != nil {
		return controllerError(err)
	}
	return &messages.ControllerResponse{PublishContext: pc}
}

// done is the response of a call that returns nothing but its error.
func done(err error) *messages.ControllerResponse {
	if err != nil {
		return controllerError(err)
	}
	return &messages.ControllerResponse{}
}

func controllerError(err error) *messages.ControllerResponse {
	return messages.ControllerResult(Code(err), err.Error())
}

// createRequest is CreateVolume for a volume spec (`volume create`).
func createRequest(v *messages.CSIVolume) *CreateRequest {
	req := &CreateRequest{Name: v.GetName(), RequiredBytes: v.GetRequestedCapacityMin(),
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
func publishRequest(op *messages.ControllerOp, v *messages.CSIVolume) (*PublishRequest, error) {
	var claim *messages.CSIVolumeClaim
	for _, c := range v.GetClaims() {
		if c.GetAllocationID() == op.GetAllocationID() {
			claim = c
		}
	}
	if claim == nil {
		return nil, fmt.Errorf("volume %q has no claim for allocation %q", v.GetID(), op.GetAllocationID())
	}
	return &PublishRequest{VolumeID: op.GetExternalVolumeID(), NodeID: op.GetExternalNodeID(),
		Capability: capability(v, claim.GetAccessMode(), claim.GetAttachmentMode()),
		ReadOnly:   claim.GetMode() == "read", Secrets: v.GetSecrets(), VolumeContext: v.GetContext()}, nil
}

func capability(v *messages.CSIVolume, access, attachment string) *VolumeCapability {
	return &VolumeCapability{AccessMode: access, AttachmentMode: attachment,
		FSType: v.GetMountOptions().GetFSType(), MountFlags: v.GetMountOptions().GetMountFlags()}
}
