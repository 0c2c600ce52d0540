// Package csi is troupe's client for Container Storage Interface plugins:
// a small Client interface over the Identity, Controller and Node
// services, its real implementation (gRPC over a unix socket, from Dial),
// and Fake, an in-memory Client for actor tests.
//
//	c, err := csi.Dial(ctx, "unix:///var/lib/troupe/csi/hostpath/csi.sock")
//	name, version, err := c.PluginInfo(ctx)
//	caps, err := c.NodeCapabilities(ctx)
//	err = c.NodeUnpublish(ctx, volumeID, targetPath)
//	switch {
//	case err == nil, csi.IsNotFound(err): // unmounted (or already was)
//	case csi.IsUnavailable(err):         // try another plugin instance
//	case csi.IsRetryable(err):           // back off and retry
//	default:                             // permanent: report it
//	}
//
// Errors that plugins return keep their gRPC status through wrapping;
// Code, IsNotFound, IsUnavailable and IsRetryable classify them (the table
// is on retryable in errors.go); IsRetryableCode classifies a code that
// travelled without its error (a controller RPC's answer to the leader). Requests missing a required field fail
// with ErrInvalidRequest before any RPC.
//
// RunController runs a controller RPC the leader routed to this client
// (a messages.ControllerRequest) on the plugin at a socket, dispatching on
// its typed kind (messages.ControllerOpKind) and answering a
// ControllerResponse whose Code is the gRPC code name ("" for OK);
// RunControllerOn does the same on any Client.
//
// Access and attachment modes travel as Nomad's strings
// ("single-node-writer", "file-system"); VolumeCapability.ToCSI and
// CapabilityFromCSI convert them, and an unknown mode is an error naming
// it (ErrUnknownAccessMode, ErrUnknownAttachmentMode).
//
// Fake counts calls per method (Calls), records their order as
// "Method volumeID" (Order), measures concurrency (MaxInFlight), and
// fails or blocks chosen calls:
//
//	f := csi.NewFake()
//	f.FailNext(csi.MethodNodeUnpublish, status.Error(codes.Internal, "busy"), 3)
//	release := f.Block(csi.MethodControllerUnpublish, "vol1")
//
// runtime/csi/hostpath is a real plugin to test against.
package csi
