package jobspec

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/troupe-dev/troupe/messages"
	"github.com/zclconf/go-cty/cty"
)

var (
	constraintAttrs = []attrSpec{
		{name: "attribute", field: "LTarget"}, {name: "operator", field: "Operand"},
		{name: "value", field: "RTarget"},
	}
	// constraintShorthands are Nomad's `regexp = "..."` style attributes:
	// each sets the operator to its name and the value to RTarget.
	constraintShorthands = []string{"regexp", "set_contains", "set_contains_any",
		"set_contains_all", "version", "semver"}
	affinityAttrs = append([]attrSpec{{name: "weight", field: "Weight"}}, constraintAttrs...)
	restartAttrs  = []attrSpec{
		{name: "attempts", field: "Attempts"}, {name: "interval", field: "Interval", dur: true},
		{name: "delay", field: "Delay", dur: true}, {name: "mode", field: "Mode"},
	}
	rescheduleAttrs = []attrSpec{
		{name: "attempts", field: "Attempts"}, {name: "interval", field: "Interval", dur: true},
		{name: "delay", field: "Delay", dur: true}, {name: "delay_function", field: "DelayFunction"},
		{name: "max_delay", field: "MaxDelay", dur: true}, {name: "unlimited", field: "Unlimited"},
	}
	migrateAttrs = []attrSpec{
		{name: "max_parallel", field: "MaxParallel"}, {name: "health_check", field: "HealthCheck"},
		{name: "min_healthy_time", field: "MinHealthyTime", dur: true},
		{name: "healthy_deadline", field: "HealthyDeadline", dur: true},
	}
	disconnectAttrs = []attrSpec{
		{name: "lost_after", field: "LostAfter", dur: true},
		{name: "stop_on_client_after", field: "StopOnClientAfter", dur: true},
		{name: "replace", field: "Replace"}, {name: "reconcile", field: "Reconcile"},
	}
	networkAttrs = []attrSpec{{name: "mode", field: "Mode"}, {name: "mbits", field: "MBits"}}
	portAttrs    = []attrSpec{
		{name: "static", field: "Value"}, {name: "to", field: "To"},
		{name: "host_network", field: "HostNetwork"},
	}
	volumeAttrs = []attrSpec{
		{name: "type", field: "Type"}, {name: "source", field: "Source"},
		{name: "read_only", field: "ReadOnly"}, {name: "access_mode", field: "AccessMode"},
		{name: "attachment_mode", field: "AttachmentMode"}, {name: "per_alloc", field: "PerAlloc"},
	}
	volumeMountAttrs = []attrSpec{
		{name: "volume", field: "Volume"}, {name: "destination", field: "Destination"},
		{name: "read_only", field: "ReadOnly"},
	}
	lifecycleAttrs = []attrSpec{{name: "hook", field: "Hook"}, {name: "sidecar", field: "Sidecar"}}
	csiPluginAttrs = []attrSpec{
		{name: "id", field: "ID"}, {name: "type", field: "Type"}, {name: "mount_dir", field: "MountDir"},
		{name: "stage_publish_base_dir", field: "StagePublishBaseDir"},
		{name: "health_timeout", field: "HealthTimeout", dur: true},
	}
	logsAttrs = []attrSpec{
		{name: "max_files", field: "MaxFiles"}, {name: "max_file_size", field: "MaxFileSizeMB"},
	}
	resourcesAttrs = []attrSpec{
		{name: "cpu", field: "CPU"}, {name: "memory", field: "MemoryMB"},
		{name: "memory_max", field: "MemoryMaxMB"}, {name: "disk", field: "DiskMB"},
		{name: "cores", field: "Cores"},
	}
	deviceAttrs = []attrSpec{{name: "count", field: "Count"}}
	spreadAttrs = []attrSpec{{name: "attribute", field: "Attribute"}, {name: "weight", field: "Weight"}}
	targetAttrs = []attrSpec{{name: "percent", field: "Percent"}}

	constraintSchema = constraintSchemaOf()
	affinitySchema   = schemaOf(affinityAttrs)
	networkSchema    = schemaOf(networkAttrs, blockSpec{"port", []string{"label"}})
	resourcesSchema  = schemaOf(resourcesAttrs, blockSpec{"device", []string{"name"}})
	deviceSchema     = schemaOf(deviceAttrs, blockSpec{name: "constraint"}, blockSpec{name: "affinity"})
	spreadSchema     = schemaOf(spreadAttrs, blockSpec{"target", []string{"value"}})
	targetSchema     = schemaOf(targetAttrs)
)

func constraintSchemaOf() *hcl.BodySchema {
	s := schemaOf(constraintAttrs)
	for _, name := range append([]string{"distinct_hosts", "distinct_property"}, constraintShorthands...) {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: name})
	}
	return s
}

func (d *hclDecoder) constraints(blocks hcl.Blocks) []*messages.Constraint {
	var out []*messages.Constraint
	for _, b := range blocks {
		out = append(out, d.constraint(b))
	}
	return out
}

// constraint decodes attribute/operator/value and Nomad's shorthands:
// distinct_hosts = true, distinct_property = "${meta.rack}", regexp = "...".
func (d *hclDecoder) constraint(b *hcl.Block) *messages.Constraint {
	c := &messages.Constraint{}
	content := d.content(b.Body, constraintSchema)
	d.decodeAttrs(content.Attributes, constraintAttrs, c)
	if a, ok := content.Attributes["distinct_hosts"]; ok {
		var on bool
		if d.convert(a, cty.Bool, &on) && on {
			c.Operand = "distinct_hosts"
		}
	}
	if a, ok := content.Attributes["distinct_property"]; ok {
		if s, ok := d.str(a); ok {
			c.Operand, c.LTarget = "distinct_property", s
		}
	}
	for _, op := range constraintShorthands {
		if a, ok := content.Attributes[op]; ok {
			if s, ok := d.str(a); ok {
				c.Operand, c.RTarget = op, s
			}
		}
	}
	return c
}

func (d *hclDecoder) restart(b *hcl.Block) (*messages.RestartPolicy, fieldSet) {
	if b == nil {
		return nil, nil
	}
	rp := &messages.RestartPolicy{}
	return rp, d.decodeAttrs(d.content(b.Body, schemaOf(restartAttrs)).Attributes, restartAttrs, rp)
}

func (d *hclDecoder) reschedule(b *hcl.Block) (*messages.ReschedulePolicy, fieldSet) {
	if b == nil {
		return nil, nil
	}
	rp := &messages.ReschedulePolicy{}
	return rp, d.decodeAttrs(d.content(b.Body, schemaOf(rescheduleAttrs)).Attributes, rescheduleAttrs, rp)
}

func (d *hclDecoder) migrate(b *hcl.Block) (*messages.MigrateStrategy, fieldSet) {
	if b == nil {
		return nil, nil
	}
	m := &messages.MigrateStrategy{}
	return m, d.decodeAttrs(d.content(b.Body, schemaOf(migrateAttrs)).Attributes, migrateAttrs, m)
}

func (d *hclDecoder) disconnect(b *hcl.Block) (*messages.DisconnectStrategy, fieldSet) {
	if b == nil {
		return nil, nil
	}
	ds := &messages.DisconnectStrategy{}
	return ds, d.decodeAttrs(d.content(b.Body, schemaOf(disconnectAttrs)).Attributes, disconnectAttrs, ds)
}

// network decodes mode and ports: a port with `static` is reserved, the
// others are dynamic.
func (d *hclDecoder) network(b *hcl.Block) *messages.NetworkResource {
	n := &messages.NetworkResource{}
	c := d.content(b.Body, networkSchema)
	d.decodeAttrs(c.Attributes, networkAttrs, n)
	for _, pb := range c.Blocks.OfType("port") {
		p := &messages.Port{Label: pb.Labels[0]}
		pc := d.content(pb.Body, schemaOf(portAttrs))
		if d.decodeAttrs(pc.Attributes, portAttrs, p).has("Value") {
			n.ReservedPorts = append(n.ReservedPorts, p)
		} else {
			n.DynamicPorts = append(n.DynamicPorts, p)
		}
	}
	return n
}

func (d *hclDecoder) volumes(blocks hcl.Blocks) map[string]*messages.VolumeRequest {
	if len(blocks) == 0 {
		return nil
	}
	out := make(map[string]*messages.VolumeRequest, len(blocks))
	for _, b := range blocks {
		name := b.Labels[0]
		if _, dup := out[name]; dup {
			d.errorf(b.DefRange, "Duplicate volume block", "Volume %q is already defined in this group.", name)
			continue
		}
		v := &messages.VolumeRequest{Name: name}
		d.decodeAttrs(d.content(b.Body, schemaOf(volumeAttrs)).Attributes, volumeAttrs, v)
		out[name] = v
	}
	return out
}

func (d *hclDecoder) volumeMount(b *hcl.Block) *messages.VolumeMount {
	vm := &messages.VolumeMount{}
	d.decodeAttrs(d.content(b.Body, schemaOf(volumeMountAttrs)).Attributes, volumeMountAttrs, vm)
	return vm
}

func (d *hclDecoder) csiPlugin(b *hcl.Block) *messages.CSIPluginConfig {
	pc := &messages.CSIPluginConfig{}
	d.decodeAttrs(d.content(b.Body, schemaOf(csiPluginAttrs)).Attributes, csiPluginAttrs, pc)
	return pc
}

func (d *hclDecoder) lifecycle(b *hcl.Block) *messages.TaskLifecycle {
	lc := &messages.TaskLifecycle{}
	d.decodeAttrs(d.content(b.Body, schemaOf(lifecycleAttrs)).Attributes, lifecycleAttrs, lc)
	return lc
}

func (d *hclDecoder) logs(b *hcl.Block) *messages.LogConfig {
	lc := &messages.LogConfig{}
	d.decodeAttrs(d.content(b.Body, schemaOf(logsAttrs)).Attributes, logsAttrs, lc)
	return lc
}

func (d *hclDecoder) resources(b *hcl.Block) (*messages.Resources, fieldSet) {
	if b == nil {
		return nil, nil
	}
	r := &messages.Resources{}
	c := d.content(b.Body, resourcesSchema)
	present := d.decodeAttrs(c.Attributes, resourcesAttrs, r)
	for _, db := range c.Blocks.OfType("device") {
		r.Devices = append(r.Devices, d.device(db))
	}
	return r, present
}

func (d *hclDecoder) device(b *hcl.Block) *messages.RequestedDevice {
	dev := &messages.RequestedDevice{Name: b.Labels[0]}
	c := d.content(b.Body, deviceSchema)
	d.decodeAttrs(c.Attributes, deviceAttrs, dev)
	dev.Constraints = d.constraints(c.Blocks.OfType("constraint"))
	dev.Affinities = d.affinities(c.Blocks.OfType("affinity"))
	return dev
}

// affinities decodes affinity blocks: attribute, operator, value, weight.
func (d *hclDecoder) affinities(blocks hcl.Blocks) []*messages.Affinity {
	var out []*messages.Affinity
	for _, b := range blocks {
		a := &messages.Affinity{}
		d.decodeAttrs(d.content(b.Body, affinitySchema).Attributes, affinityAttrs, a)
		out = append(out, a)
	}
	return out
}

// spreads decodes spread blocks: attribute, weight and target "value" {
// percent = N } blocks.
func (d *hclDecoder) spreads(blocks hcl.Blocks) []*messages.Spread {
	var out []*messages.Spread
	for _, b := range blocks {
		sp := &messages.Spread{}
		c := d.content(b.Body, spreadSchema)
		d.decodeAttrs(c.Attributes, spreadAttrs, sp)
		for _, tb := range c.Blocks.OfType("target") {
			st := &messages.SpreadTarget{Value: tb.Labels[0]}
			d.decodeAttrs(d.content(tb.Body, targetSchema).Attributes, targetAttrs, st)
			sp.SpreadTarget = append(sp.SpreadTarget, st)
		}
		out = append(out, sp)
	}
	return out
}
