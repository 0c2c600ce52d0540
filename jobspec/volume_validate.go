package jobspec

import (
	"maps"
	"strings"

	"github.com/troupe-dev/troupe/messages"
)

// CanonicalizeVolume fills a parsed volume's defaults (namespace
// "default"). It is idempotent.
func CanonicalizeVolume(v *messages.CSIVolume) {
	if v != nil {
		setDefault(&v.Namespace, defaultNamespace)
	}
}

// AdoptRequiredTopologies gives a volume being registered (`volume
// register`, not create) the topologies it is accessible from, as Nomad
// does: the volume already exists, so its topology_request's required
// topologies say where it can be reached (a node needs to meet one of
// them). Topologies given explicitly (Nomad's JSON "Topologies") win.
// Preferred topologies stay as requested: they only steer a create. It is
// idempotent.
func AdoptRequiredTopologies(v *messages.CSIVolume) {
	if v == nil || len(v.Topologies) > 0 {
		return
	}
	for _, t := range v.GetRequestedTopologies().GetRequired() {
		v.Topologies = append(v.Topologies, &messages.CSITopology{Segments: maps.Clone(t.GetSegments())})
	}
}

// ValidateVolume checks a volume specification, normally after
// CanonicalizeVolume, and returns nil or a *ValidationError listing every
// problem, each naming its field (`capability[0]: access_mode "rw" must
// be one of ...`). create selects the rules of `volume create`, where the
// plugin makes the volume and external_id is not needed; `volume
// register` (create false) requires external_id.
func ValidateVolume(v *messages.CSIVolume, create bool) error {
	var problems []string
	c := checker{problems: &problems}
	if v == nil {
		c.addf("volume is missing")
	} else {
		validateVolumeSpec(c, v, create)
	}
	if len(problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: problems}
}

func validateVolumeSpec(c checker, v *messages.CSIVolume, create bool) {
	validateID(c, v.ID)
	if strings.Contains(v.ID, "/") {
		c.addf("id %s must not contain a slash", shown(v.ID))
	} else if v.ID == "." || v.ID == ".." {
		c.addf("id must not be %q", v.ID)
	}
	for _, f := range [][2]string{{"name", v.Name}, {"namespace", v.Namespace}, {"plugin_id", v.PluginID}} {
		if f[1] == "" {
			c.addf("%s must not be empty", f[0])
		} else if p := textProblem(f[1], c.lim().MaxNameLength); p != "" {
			c.addf("%s %s", f[0], p)
		}
	}
	if !create && v.ExternalID == "" {
		c.addf("external_id must be set to register a volume (the storage provider's ID for it); use volume create to have the plugin make one")
	}
	validateCapabilities(c, v.RequestedCapabilities)
	validateCapacity(c, v.RequestedCapacityMin, v.RequestedCapacityMax)
	if v.SnapshotID != "" && v.CloneID != "" {
		c.addf("only one of snapshot_id and clone_id may be set")
	}
	if tr := v.RequestedTopologies; tr != nil {
		validateTopologies(c.at("topology_request.required"), tr.Required)
		validateTopologies(c.at("topology_request.preferred"), tr.Preferred)
	}
	validateTopologies(c.at("topologies"), v.Topologies)
}

func validateCapabilities(c checker, caps []*messages.CSIVolumeCapability) {
	if len(caps) == 0 {
		c.addf("capability: at least one capability block is required")
	}
	for i, cp := range caps {
		cc := c.at("capability[%d]", i)
		if cp == nil {
			cc.addf("is missing")
			continue
		}
		checkCSIModes(cc, cp.AccessMode, cp.AttachmentMode, "")
	}
}

func validateCapacity(c checker, minBytes, maxBytes int64) {
	nonNegative(c, "capacity_min", minBytes)
	nonNegative(c, "capacity_max", maxBytes)
	if maxBytes > 0 && maxBytes < minBytes {
		c.addf("capacity_max (%d bytes) must not be less than capacity_min (%d bytes)", maxBytes, minBytes)
	}
}

func validateTopologies(c checker, ts []*messages.CSITopology) {
	for i, t := range ts {
		if len(t.GetSegments()) == 0 {
			c.at("topology[%d]", i).addf("segments must not be empty")
		}
	}
}
