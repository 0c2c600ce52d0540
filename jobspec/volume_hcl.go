package jobspec

import (
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/troupe-dev/troupe/messages"
)

var (
	volumeSpecAttrs = []attrSpec{
		{name: "id", field: "ID"}, {name: "name", field: "Name"}, {name: "namespace", field: "Namespace"},
		{name: "external_id", field: "ExternalID"}, {name: "plugin_id", field: "PluginID"},
		{name: "snapshot_id", field: "SnapshotID"}, {name: "clone_id", field: "CloneID"},
	}
	capabilityAttrs = []attrSpec{
		{name: "access_mode", field: "AccessMode"}, {name: "attachment_mode", field: "AttachmentMode"},
	}
	mountOptionsAttrs = []attrSpec{{name: "fs_type", field: "FSType"}, {name: "mount_flags", field: "MountFlags"}}

	volumeSpecSchema  = volumeSpecSchemaOf()
	topologyReqSchema = schemaOf(nil, blockSpec{name: "required"}, blockSpec{name: "preferred"})
	topologiesSchema  = schemaOf(nil, blockSpec{name: "topology"})
	topologySchema    = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "segments"}}}
)

// volumeSpecSchema is the top level of a volume specification file: the
// attributes decoded into CSIVolume fields, type and the capacities
// (decoded by hand), and the blocks.
func volumeSpecSchemaOf() *hcl.BodySchema {
	s := schemaOf(volumeSpecAttrs,
		blockSpec{name: "capability"}, blockSpec{name: "mount_options"}, blockSpec{name: "secrets"},
		blockSpec{name: "parameters"}, blockSpec{name: "context"}, blockSpec{name: "topology_request"})
	for _, name := range []string{"type", "capacity_min", "capacity_max"} {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: name})
	}
	return s
}

// ParseVolume decodes a volume specification file, as `troupe volume
// register` and `troupe volume create` read it (Nomad's format: top-level
// id, name, type = "csi", namespace, external_id, plugin_id, capacity_min,
// capacity_max, snapshot_id, clone_id; capability blocks; mount_options,
// secrets, parameters, context and topology_request blocks). Capacities
// are sizes such as "10GiB" or "200G". type must be "csi", and capability
// modes must be valid; these errors, like syntax errors, are *ParseError
// with file:line:col. Call CanonicalizeVolume and ValidateVolume next.
func ParseVolume(filename string, src []byte) (*messages.CSIVolume, error) {
	if pe := checkHCLShape(filename, src); pe != nil {
		return nil, pe
	}
	file, diags := hclsyntax.ParseConfig(segmentsAsAttributes(src, filename), filename, hcl.Pos{Line: 1, Column: 1})
	if diags.HasErrors() {
		return nil, parseErrorOf(filename, diags)
	}
	d := &hclDecoder{ev: evaluator{src: src}}
	v := d.volumeSpec(file.Body)
	if d.diags.HasErrors() {
		return nil, parseErrorOf(filename, d.diags)
	}
	return v, nil
}

func (d *hclDecoder) volumeSpec(body hcl.Body) *messages.CSIVolume {
	c := d.content(body, volumeSpecSchema)
	v := &messages.CSIVolume{}
	d.decodeAttrs(c.Attributes, volumeSpecAttrs, v)
	d.volumeType(c.Attributes["type"], body)
	v.RequestedCapacityMin = d.size(c.Attributes["capacity_min"])
	v.RequestedCapacityMax = d.size(c.Attributes["capacity_max"])
	for _, cb := range c.Blocks.OfType("capability") {
		v.RequestedCapabilities = append(v.RequestedCapabilities, d.capability(cb))
	}
	if mb := d.single(c, "mount_options"); mb != nil {
		v.MountOptions = &messages.CSIMountOptions{}
		d.decodeAttrs(d.content(mb.Body, schemaOf(mountOptionsAttrs)).Attributes, mountOptionsAttrs, v.MountOptions)
	}
	if b := d.single(c, "secrets"); b != nil {
		v.Secrets = d.stringMap(b)
	}
	if b := d.single(c, "parameters"); b != nil {
		v.Parameters = d.stringMap(b)
	}
	if b := d.single(c, "context"); b != nil {
		v.Context = d.stringMap(b)
	}
	if tb := d.single(c, "topology_request"); tb != nil {
		v.RequestedTopologies = d.topologyRequest(tb)
	}
	return v
}

// volumeType requires type = "csi": troupe has no other volume kind.
func (d *hclDecoder) volumeType(a *hcl.Attribute, body hcl.Body) {
	if a == nil {
		d.errorf(body.MissingItemRange(), "Missing type",
			`A volume specification must set type = "csi".`)
		return
	}
	if typ, ok := d.str(a); ok && typ != VolumeTypeCSI {
		d.errorf(a.Expr.Range(), "Unsupported volume type",
			`type %q is not supported; troupe volume specifications describe CSI volumes (type = "csi").`, typ)
	}
}

// size reads a capacity such as "10GiB"; an absent attribute is 0.
func (d *hclDecoder) size(a *hcl.Attribute) int64 {
	if a == nil {
		return 0
	}
	s, ok := d.str(a)
	if !ok {
		return 0
	}
	n, err := ParseSize(s)
	if err != nil {
		d.errorf(a.Expr.Range(), "Invalid size", "Attribute %q: %s.", a.Name, err)
	}
	return n
}

func (d *hclDecoder) capability(b *hcl.Block) *messages.CSIVolumeCapability {
	cc := &messages.CSIVolumeCapability{}
	c := d.content(b.Body, schemaOf(capabilityAttrs))
	set := d.decodeAttrs(c.Attributes, capabilityAttrs, cc)
	d.oneOf(c.Attributes["access_mode"], set.has("AccessMode"), cc.AccessMode, csiAccessModes)
	d.oneOf(c.Attributes["attachment_mode"], set.has("AttachmentMode"), cc.AttachmentMode, csiAttachmentModes)
	for _, name := range []string{"access_mode", "attachment_mode"} {
		if _, ok := c.Attributes[name]; !ok {
			d.errorf(b.DefRange, "Missing "+name, "A capability block must set %s.", name)
		}
	}
	return cc
}

// oneOf reports an attribute, decoded into val, whose value is not one of
// allowed.
func (d *hclDecoder) oneOf(a *hcl.Attribute, decoded bool, val string, allowed []string) {
	if a == nil || !decoded || slices.Contains(allowed, val) {
		return
	}
	d.errorf(a.Expr.Range(), "Invalid "+a.Name, "%s %q must be one of %s.", a.Name, val, strings.Join(allowed, ", "))
}

// topologyRequest decodes
//
//	topology_request {
//	  required  { topology { segments { rack = "R1" } } ... }
//	  preferred { topology { segments { rack = "R2" } } ... }
//	}
func (d *hclDecoder) topologyRequest(b *hcl.Block) *messages.CSITopologyRequest {
	c := d.content(b.Body, topologyReqSchema)
	req := &messages.CSITopologyRequest{}
	if rb := d.single(c, "required"); rb != nil {
		req.Required = d.topologies(rb)
	}
	if pb := d.single(c, "preferred"); pb != nil {
		req.Preferred = d.topologies(pb)
	}
	return req
}

func (d *hclDecoder) topologies(b *hcl.Block) []*messages.CSITopology {
	var out []*messages.CSITopology
	for _, tb := range d.content(b.Body, topologiesSchema).Blocks.OfType("topology") {
		// segments is an object here: segmentsAsAttributes made the
		// block form one.
		sa := d.content(tb.Body, topologySchema).Attributes["segments"]
		if sa == nil {
			d.errorf(tb.DefRange, "Missing segments", "A topology block must hold a segments block.")
			continue
		}
		segs := map[string]string{}
		if !d.convert(sa, cty.Map(cty.String), &segs) {
			continue
		}
		if len(segs) == 0 {
			d.errorf(sa.NameRange, "Empty segments", "A topology's segments block must set at least one segment.")
		}
		out = append(out, &messages.CSITopology{Segments: segs})
	}
	return out
}
