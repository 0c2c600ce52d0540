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
