package jobspec

import (
	"slices"
	"sort"
	"strings"

	"github.com/troupe-dev/troupe/messages"
)

var (
	csiAccessModes = []string{"single-node-reader-only", "single-node-writer",
		"multi-node-reader-only", "multi-node-single-writer", "multi-node-multi-writer"}
	csiAttachmentModes = []string{"file-system", "block-device"}
)

func validateNetworks(c checker, ns []*messages.NetworkResource) {
	for i, n := range ns {
		nc := c.at("network[%d]", i)
		if n == nil {
			nc.addf("is missing")
			continue
		}
		switch {
		case n.Mode == "", n.Mode == "host", n.Mode == "bridge", n.Mode == "none":
		case strings.HasPrefix(n.Mode, "cni/") && len(n.Mode) > len("cni/"):
		default:
			nc.addf("mode %q must be host, bridge, none or cni/<name>", n.Mode)
		}
		labels := map[string]bool{}
		for _, p := range append(slices.Clone(n.ReservedPorts), n.DynamicPorts...) {
			validatePort(nc, p, labels)
		}
	}
}

func validatePort(c checker, p *messages.Port, labels map[string]bool) {
	if p == nil {
		return
	}
	pc := c.at("port %q", p.Label)
	if p.Label == "" {
		pc.addf("label must not be empty")
	} else if labels[p.Label] {
		pc.addf("label is not unique")
	}
	labels[p.Label] = true
	if p.Value < 0 || p.Value > 65535 {
		pc.addf("static %d must be between 0 and 65535", p.Value)
	}
	if p.To < -1 || p.To > 65535 {
		pc.addf("to %d must be between -1 and 65535", p.To)
	}
}

func validateVolumes(c checker, vols map[string]*messages.VolumeRequest) {
	names := make([]string, 0, len(vols))
	for name := range vols {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v, vc := vols[name], c.at("volume %q", name)
		if v == nil {
			vc.addf("is missing")
			continue
		}
		if v.Type != "csi" && v.Type != "host" {
			vc.addf("type %q must be \"csi\" or \"host\"", v.Type)
		}
		if v.Source == "" {
			vc.addf("source must not be empty")
		}
		if v.Type != "csi" {
			continue
		}
		if v.AccessMode != "" && !slices.Contains(csiAccessModes, v.AccessMode) {
			vc.addf("access_mode %q must be one of %s", v.AccessMode, strings.Join(csiAccessModes, ", "))
		}
		if v.AttachmentMode != "" && !slices.Contains(csiAttachmentModes, v.AttachmentMode) {
			vc.addf("attachment_mode %q must be file-system or block-device", v.AttachmentMode)
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
