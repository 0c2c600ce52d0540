package jobspec

import (
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/troupe-dev/troupe/messages"
)

// CSI plugin types of a task's csi_plugin block.
const (
	PluginMonolith   = "monolith"
	PluginController = "controller"
	PluginNode       = "node"
)

// Volume types of a group's volume block.
const (
	VolumeTypeCSI  = "csi"
	VolumeTypeHost = "host"
)

var (
	csiAccessModes = []string{messages.CSIAccessSingleNodeReader, messages.CSIAccessSingleNodeWriter,
		messages.CSIAccessMultiNodeReader, messages.CSIAccessMultiNodeSingleWriter, messages.CSIAccessMultiNodeMultiWriter}
	csiAttachmentModes = []string{messages.CSIAttachFileSystem, messages.CSIAttachBlockDevice}
	csiPluginTypes     = []string{PluginMonolith, PluginController, PluginNode}
)

func validateVolumes(c checker, g *messages.TaskGroup) {
	names := make([]string, 0, len(g.Volumes))
	for name := range g.Volumes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v, vc := g.Volumes[name], c.at("volume %s", shown(name))
		if p := nameProblem(name, c.lim().MaxNameLength); p != "" {
			vc.addf("name %s", p)
		}
		if v == nil {
			vc.addf("is missing")
			continue
		}
		if v.Source == "" {
			vc.addf("source must not be empty")
		} else if p := textProblem(v.Source, c.lim().MaxNameLength); p != "" {
			vc.addf("source %s", p)
		}
		switch v.Type {
		case VolumeTypeCSI:
			validateCSIRequest(vc, v, g.Count)
		case VolumeTypeHost:
			validateHostRequest(vc, v)
		default:
			vc.addf("type %q must be \"csi\" or \"host\"", v.Type)
		}
	}
}

func validateHostRequest(c checker, v *messages.VolumeRequest) {
	if v.AccessMode != "" {
		c.addf("access_mode is only for csi volumes")
	}
	if v.AttachmentMode != "" {
		c.addf("attachment_mode is only for csi volumes")
	}
	if v.PerAlloc {
		c.addf("per_alloc is only for csi volumes")
	}
}

// validateCSIRequest applies Nomad's rules: both modes are required, the
// reader-only modes need read_only, and a single-writer mode cannot serve
// several allocations of the group unless each gets its own volume
// (per_alloc).
func validateCSIRequest(c checker, v *messages.VolumeRequest, count int32) {
	checkCSIModes(c, v.AccessMode, v.AttachmentMode, " for csi volumes")
	shared := count > 1 && !v.PerAlloc
	switch v.AccessMode {
	case messages.CSIAccessSingleNodeReader, messages.CSIAccessMultiNodeReader:
		if !v.ReadOnly {
			c.addf("access_mode %q needs read_only = true", v.AccessMode)
		}
	case messages.CSIAccessSingleNodeWriter:
		if shared {
			c.addf("access_mode %q allows one allocation; count %d needs per_alloc = true", v.AccessMode, count)
		}
	case messages.CSIAccessMultiNodeSingleWriter:
		if shared && !v.ReadOnly {
			c.addf("access_mode %q allows one writer; count %d needs per_alloc = true or read_only = true", v.AccessMode, count)
		}
	}
}

func validateVolumeMount(c checker, g *messages.TaskGroup, vm *messages.VolumeMount) {
	if vm == nil {
		c.addf("is missing")
		return
	}
	if _, ok := g.Volumes[vm.Volume]; !ok {
		c.addf("volume %q is not defined in the group", vm.Volume)
	}
	if vm.Destination == "" {
		c.addf("destination must not be empty")
	}
}

// validateCSIPlugin checks a task's csi_plugin block, after Canonicalize
// (which fills mount_dir, stage_publish_base_dir and health_timeout).
func validateCSIPlugin(c checker, pc *messages.CSIPluginConfig) {
	if pc.ID == "" {
		c.addf("id must not be empty")
	} else if strings.ContainsAny(pc.ID, " /") {
		c.addf("id %q must not contain spaces or slashes", pc.ID)
	}
	if !slices.Contains(csiPluginTypes, pc.Type) {
		c.addf("type %q must be one of %s", pc.Type, strings.Join(csiPluginTypes, ", "))
	}
	if !path.IsAbs(pc.MountDir) {
		c.addf("mount_dir %q must be an absolute path", pc.MountDir)
	}
	if pc.StagePublishBaseDir != "" && !path.IsAbs(pc.StagePublishBaseDir) {
		c.addf("stage_publish_base_dir %q must be an absolute path", pc.StagePublishBaseDir)
	}
	if path.IsAbs(pc.MountDir) && within(pc.StagePublishBaseDir, pc.MountDir) {
		c.addf("stage_publish_base_dir %q must not be inside mount_dir %q", pc.StagePublishBaseDir, pc.MountDir)
	}
	nonNegative(c, "health_timeout", pc.HealthTimeout)
}

// within reports whether dir is base or below it.
func within(dir, base string) bool {
	if dir == "" {
		return false
	}
	dir, base = path.Clean(dir), path.Clean(base)
	return dir == base || base == "/" || strings.HasPrefix(dir, base+"/")
}

// checkCSIModes checks an access and an attachment mode: both set (the
// message says where, after "must be set") and known.
func checkCSIModes(c checker, access, attachment, where string) {
	switch {
	case access == "":
		c.addf("access_mode must be set%s (one of %s)", where, strings.Join(csiAccessModes, ", "))
	case !slices.Contains(csiAccessModes, access):
		c.addf("access_mode %q must be one of %s", access, strings.Join(csiAccessModes, ", "))
	}
	switch {
	case attachment == "":
		c.addf("attachment_mode must be set%s (file-system or block-device)", where)
	case !slices.Contains(csiAttachmentModes, attachment):
		c.addf("attachment_mode %q must be file-system or block-device", attachment)
	}
}
