// Package hostpath is a CSI plugin of troupe's own, for tests and
// single-host setups: real gRPC on a unix socket serving the Identity,
// Controller and Node services of the CSI spec, with volumes as
// directories under a root directory.
//
//	p, err := hostpath.New(hostpath.Config{Root: dir, NodeID: "node-1"})
//	err = p.Start(ctx, "/run/csi/csi.sock") // serves until ctx ends or Stop
//	defer p.Stop()
//
// Behaviour:
//   - CreateVolume makes Root/<name> (the volume ID is the name; from a
//     snapshot, a copy of it); DeleteVolume removes it and refuses
//     (FailedPrecondition) while the volume is published.
//   - ControllerPublish/Unpublish record attachments in memory and answer
//     NotFound for unknown volumes; single-node access modes refuse a
//     second node.
//   - NodeStage (STAGE_UNSTAGE_VOLUME) creates the staging directory and a
//     StagedMarker file in it; NodeUnstage removes the marker and refuses
//     while the volume is still published on the node.
//   - NodePublish makes the target a bind mount of the volume directory
//     when running as root (MS_BIND, then an MS_RDONLY remount for
//     read-only), else a symlink to it (also as root with Config.Symlinks,
//     or when the kernel refuses the mount). Tests running as root check
//     the real bind mount.
//   - NodeUnpublish and NodeUnstage succeed when already undone, as the
//     spec's idempotency rule requires.
//   - CreateSnapshot copies a volume; DeleteSnapshot removes the copy.
//
// Faults, per CSI RPC name (see Methods), for tests: FailNext and
// FailNextVolume (answer a gRPC code N times), SetLatency, Hang/Release,
// SetRaceMode ("device name race": a ControllerPublish/Unpublish that
// overlaps another fails with Internal), ResetFaults. Calls returns a
// record of every RPC with its start, end and code. StartControl serves
// the same over HTTP on a unix socket, and Control is its client, for a
// plugin that runs as a job (cmd/troupe-csi-hostpath).
package hostpath
