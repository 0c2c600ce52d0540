package csi

import (
	"fmt"
	"slices"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/troupe-dev/troupe/messages"
)

// The access and attachment modes are messages' (messages.CSIAccess*,
// messages.CSIAttach*, as Nomad spells them in volume specs and job files).
//
// Deprecated: use messages' constants; these aliases stay only while
// actors/alloc's tests still name them.
const (
	AccessModeSingleNodeReader      = messages.CSIAccessSingleNodeReader
	AccessModeSingleNodeWriter      = messages.CSIAccessSingleNodeWriter
	AccessModeMultiNodeReader       = messages.CSIAccessMultiNodeReader
	AccessModeMultiNodeSingleWriter = messages.CSIAccessMultiNodeSingleWriter
	AccessModeMultiNodeMultiWriter  = messages.CSIAccessMultiNodeMultiWriter
	AttachmentModeFilesystem        = messages.CSIAttachFileSystem
	AttachmentModeBlockDevice       = messages.CSIAttachBlockDevice
)

var accessModes = map[string]csipb.VolumeCapability_AccessMode_Mode{
	messages.CSIAccessSingleNodeReader:      csipb.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY,
	messages.CSIAccessSingleNodeWriter:      csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
	messages.CSIAccessMultiNodeReader:       csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY,
	messages.CSIAccessMultiNodeSingleWriter: csipb.VolumeCapability_AccessMode_MULTI_NODE_SINGLE_WRITER,
	messages.CSIAccessMultiNodeMultiWriter:  csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER,
}

// AccessModes lists every access mode troupe knows, sorted.
func AccessModes() []string { return sortedKeys(accessModes) }

// AttachmentModes lists every attachment mode troupe knows, sorted.
func AttachmentModes() []string {
	return []string{messages.CSIAttachBlockDevice, messages.CSIAttachFileSystem}
}

// AccessModeToCSI maps a troupe access mode to the CSI enum.
func AccessModeToCSI(mode string) (csipb.VolumeCapability_AccessMode_Mode, error) {
	m, ok := accessModes[mode]
	if !ok {
		return csipb.VolumeCapability_AccessMode_UNKNOWN,
			fmt.Errorf("%w %q (want one of %v)", ErrUnknownAccessMode, mode, AccessModes())
	}
	return m, nil
}

// AccessModeFromCSI maps a CSI access mode back to troupe's name. The CSI
// 1.5 modes SINGLE_NODE_SINGLE_WRITER and SINGLE_NODE_MULTI_WRITER have no
// troupe (or Nomad) name and are an error, as is UNKNOWN.
func AccessModeFromCSI(m csipb.VolumeCapability_AccessMode_Mode) (string, error) {
	for name, v := range accessModes {
		if v == m {
			return name, nil
		}
	}
	return "", fmt.Errorf("%w: CSI mode %s", ErrUnknownAccessMode, m)
}

// VolumeCapability is how a volume is accessed: troupe's access and
// attachment modes plus, for file-system attachments, the fs type and
// mount flags.
type VolumeCapability struct {
	AccessMode     string
	AttachmentMode string
	FSType         string
	MountFlags     []string
}

// ToCSI converts c to the CSI message. Unknown modes are an error naming
// them; a nil c converts to nil.
func (c *VolumeCapability) ToCSI() (*csipb.VolumeCapability, error) {
	if c == nil {
		return nil, nil
	}
	mode, err := AccessModeToCSI(c.AccessMode)
	if err != nil {
		return nil, err
	}
	out := &csipb.VolumeCapability{AccessMode: &csipb.VolumeCapability_AccessMode{Mode: mode}}
	switch c.AttachmentMode {
	case messages.CSIAttachFileSystem:
		out.AccessType = &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{
			FsType: c.FSType, MountFlags: slices.Clone(c.MountFlags)}}
	case messages.CSIAttachBlockDevice:
		out.AccessType = &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}}
	default:
		return nil, fmt.Errorf("%w %q (want one of %v)", ErrUnknownAttachmentMode,
			c.AttachmentMode, AttachmentModes())
	}
	return out, nil
}

// CapabilityFromCSI converts a CSI capability back to troupe's form.
func CapabilityFromCSI(c *csipb.VolumeCapability) (*VolumeCapability, error) {
	if c == nil {
		return nil, nil
	}
	mode, err := AccessModeFromCSI(c.GetAccessMode().GetMode())
	if err != nil {
		return nil, err
	}
	out := &VolumeCapability{AccessMode: mode}
	switch {
	case c.GetMount() != nil:
		out.AttachmentMode = messages.CSIAttachFileSystem
		out.FSType = c.GetMount().GetFsType()
		out.MountFlags = slices.Clone(c.GetMount().GetMountFlags())
	case c.GetBlock() != nil:
		out.AttachmentMode = messages.CSIAttachBlockDevice
	default:
		return nil, fmt.Errorf("%w: capability has no access type", ErrUnknownAttachmentMode)
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
