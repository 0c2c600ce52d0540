package messages

// CSI access and attachment modes, as Nomad spells them in job files,
// volume specs and the API. The packages that check or map modes
// (jobspec, cluster/state, runtime/csi, the scheduler) name these.
const (
	CSIAccessSingleNodeReader      = "single-node-reader-only"
	CSIAccessSingleNodeWriter      = "single-node-writer"
	CSIAccessMultiNodeReader       = "multi-node-reader-only"
	CSIAccessMultiNodeSingleWriter = "multi-node-single-writer"
	CSIAccessMultiNodeMultiWriter  = "multi-node-multi-writer"

	CSIAttachFileSystem  = "file-system"
	CSIAttachBlockDevice = "block-device"
)

// ControllerOpKind names a CSI controller operation: ControllerOp.Kind,
// which travels as its string.
type ControllerOpKind string

// The controller operations. Create runs from an operator's `volume
// create`; the others are the destructive RPCs a plugin's controller
// actor serialises.
const (
	ControllerCreateVolume   ControllerOpKind = "create-volume"
	ControllerPublish        ControllerOpKind = "controller-publish"
	ControllerUnpublish      ControllerOpKind = "controller-unpublish"
	ControllerExpand         ControllerOpKind = "controller-expand"
	ControllerDeleteVolume   ControllerOpKind = "delete-volume"
	ControllerCreateSnapshot ControllerOpKind = "create-snapshot"
	ControllerDeleteSnapshot ControllerOpKind = "delete-snapshot"
)

// OpKind is the operation's kind as a typed value.
func (x *ControllerOp) OpKind() ControllerOpKind { return ControllerOpKind(x.GetKind()) }
