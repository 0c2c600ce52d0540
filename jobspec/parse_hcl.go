package jobspec

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/troupe-dev/troupe/messages"
)

var (
	jobAttrs = []attrSpec{
		{name: "name", field: "Name"}, {name: "namespace", field: "Namespace"},
		{name: "region", field: "Region"}, {name: "datacenters", field: "Datacenters"},
		{name: "type", field: "Type"}, {name: "priority", field: "Priority"},
		{name: "node_pool", field: "NodePool"},
	}
	groupAttrs = []attrSpec{
		{name: "count", field: "Count"},
		{name: "stop_after_client_disconnect", field: "StopAfterClientDisconnect", dur: true},
	}
	taskAttrs = []attrSpec{
		{name: "driver", field: "Driver"}, {name: "user", field: "User"},
		{name: "leader", field: "Leader"}, {name: "kill_signal", field: "KillSignal"},
		{name: "kill_timeout", field: "KillTimeout", dur: true},
	}

	fileSchema = schemaOf(nil, blockSpec{"job", []string{"name"}}, blockSpec{"variable", []string{"name"}})
	jobSchema  = schemaOf(jobAttrs, blockSpec{name: "meta"}, blockSpec{name: "constraint"},
		blockSpec{name: "affinity"}, blockSpec{name: "spread"}, blockSpec{"group", []string{"name"}},
		blockSpec{name: "periodic"}, blockSpec{name: "parameterized"}, blockSpec{name: "update"}, blockSpec{name: "multiregion"})
	groupSchema = schemaOf(groupAttrs,
		blockSpec{name: "constraint"}, blockSpec{name: "affinity"}, blockSpec{name: "spread"},
		blockSpec{name: "restart"}, blockSpec{name: "reschedule"},
		blockSpec{name: "migrate"}, blockSpec{name: "disconnect"}, blockSpec{name: "network"},
		blockSpec{"volume", []string{"name"}}, blockSpec{name: "meta"}, blockSpec{"task", []string{"name"}},
		blockSpec{name: "service"}, blockSpec{name: "update"})
	taskSchema = schemaOf(taskAttrs,
		blockSpec{name: "config"}, blockSpec{name: "env"}, blockSpec{name: "resources"},
		blockSpec{name: "restart"}, blockSpec{name: "meta"}, blockSpec{name: "constraint"},
		blockSpec{name: "affinity"}, blockSpec{name: "volume_mount"}, blockSpec{name: "logs"},
		blockSpec{name: "csi_plugin"}, blockSpec{name: "template"}, blockSpec{name: "artifact"},
		blockSpec{name: "service"}, blockSpec{name: "lifecycle"}, blockSpec{name: "dispatch_payload"},
		blockSpec{name: "identity"})
)

// Parse decodes an HCL job file (a Nomad-like subset) into a job. filename
// is used in error positions. Runtime interpolations such as
// "${attr.kernel.name}" or "${NOMAD_ALLOC_ID}" are kept verbatim. Groups
// without count get 1, and partial restart/reschedule/migrate blocks are
// merged over the job type's defaults; call Canonicalize for the rest.
// Errors are *ParseError; a file nested deeper than MaxNestingDepth, or
// with an expression of more than MaxExprOperators operators, is one too.
func Parse(filename string, src []byte) (*messages.Job, error) {
	return parse(filename, src, Variables{})
}

func parse(filename string, src []byte, vars Variables) (*messages.Job, error) {
	file, d, err := parseHCLFile(filename, src)
	if err != nil {
		return nil, err
	}
	c := d.content(file.Body, fileSchema)
	d.variables(c.Blocks.OfType("variable"), vars)
	jobs := c.Blocks.OfType("job")
	if len(jobs) == 0 && !d.diags.HasErrors() {
		d.errorf(file.Body.MissingItemRange(), "Missing job block", "A job file must contain one job block.")
	}
	var job *messages.Job
	var pres []groupPresence
	var jobUpdate fieldSet
	if len(jobs) > 0 {
		job, pres, jobUpdate = d.job(jobs[0])
	}
	d.single(c, "job")
	if d.diags.HasErrors() {
		return nil, parseErrorOf(filename, d.diags)
	}
	applyPresence(job, pres)
	applyUpdate(job, jobUpdate, pres)
	return job, nil
}

// parseHCLFile checks the shape of an HCL file and parses it, with a decoder
// for its bodies; errors are *ParseError.
func parseHCLFile(filename string, src []byte) (*hcl.File, *hclDecoder, error) {
	if pe := checkHCLShape(filename, src); pe != nil {
		return nil, nil, pe
	}
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.Pos{Line: 1, Column: 1})
	if diags.HasErrors() {
		return nil, nil, parseErrorOf(filename, diags)
	}
	return file, &hclDecoder{ev: evaluator{src: src}}, nil
}

func (d *hclDecoder) job(b *hcl.Block) (*messages.Job, []groupPresence, fieldSet) {
	job := &messages.Job{ID: b.Labels[0]}
	c := d.content(b.Body, jobSchema)
	set := d.decodeAttrs(c.Attributes, jobAttrs, job)
	for _, f := range [][2]string{{"Type", job.Type}, {"Name", job.Name}} {
		if f, v := f[0], f[1]; set.has(f) && v == "" {
			d.errorf(c.Attributes[strings.ToLower(f)].Expr.Range(), "Empty job "+strings.ToLower(f), "%s", emptyField(f))
		}
	}
	if m := d.single(c, "meta"); m != nil {
		job.Meta = d.stringMap(m)
	}
	job.Constraints = d.constraints(c.Blocks.OfType("constraint"))
	job.Affinities = d.affinities(c.Blocks.OfType("affinity"))
	job.Spreads = d.spreads(c.Blocks.OfType("spread"))
	job.Periodic = d.periodic(d.single(c, "periodic"))
	job.ParameterizedJob = d.parameterized(d.single(c, "parameterized"))
	job.Multiregion = d.multiregion(d.single(c, "multiregion"))
	var jobUpdate fieldSet
	job.Update, jobUpdate = d.update(d.single(c, "update"))
	var pres []groupPresence
	for _, gb := range c.Blocks.OfType("group") {
		g, p := d.group(gb)
		job.TaskGroups = append(job.TaskGroups, g)
		pres = append(pres, p)
	}
	return job, pres, jobUpdate
}

func (d *hclDecoder) group(b *hcl.Block) (*messages.TaskGroup, groupPresence) {
	g := &messages.TaskGroup{Name: b.Labels[0]}
	c := d.content(b.Body, groupSchema)
	var p groupPresence
	p.count = d.decodeAttrs(c.Attributes, groupAttrs, g).has("Count")
	g.Constraints = d.constraints(c.Blocks.OfType("constraint"))
	g.Affinities = d.affinities(c.Blocks.OfType("affinity"))
	g.Spreads = d.spreads(c.Blocks.OfType("spread"))
	if m := d.single(c, "meta"); m != nil {
		g.Meta = d.stringMap(m)
	}
	g.RestartPolicy, p.restart = d.restart(d.single(c, "restart"))
	g.ReschedulePolicy, p.reschedule = d.reschedule(d.single(c, "reschedule"))
	g.Migrate, p.migrate = d.migrate(d.single(c, "migrate"))
	g.Disconnect, p.disconnect = d.disconnect(d.single(c, "disconnect"))
	g.Update, p.update = d.update(d.single(c, "update"))
	if nb := d.single(c, "network"); nb != nil {
		g.Networks = []*messages.NetworkResource{d.network(nb)}
	}
	g.Volumes = d.volumes(c.Blocks.OfType("volume"))
	g.Services = d.services(c.Blocks.OfType("service"))
	for _, tb := range c.Blocks.OfType("task") {
		t, tp := d.task(tb)
		g.Tasks = append(g.Tasks, t)
		p.tasks = append(p.tasks, tp)
	}
	return g, p
}

func (d *hclDecoder) task(b *hcl.Block) (*messages.Task, taskPresence) {
	t := &messages.Task{Name: b.Labels[0]}
	c := d.content(b.Body, taskSchema)
	var p taskPresence
	d.decodeAttrs(c.Attributes, taskAttrs, t)
	if cb := d.single(c, "config"); cb != nil {
		t.Config = d.config(cb)
	}
	if eb := d.single(c, "env"); eb != nil {
		t.Env = d.stringMap(eb)
	}
	if m := d.single(c, "meta"); m != nil {
		t.Meta = d.stringMap(m)
	}
	t.Resources, p.resources = d.resources(d.single(c, "resources"))
	t.RestartPolicy, p.restart = d.restart(d.single(c, "restart"))
	t.Constraints = d.constraints(c.Blocks.OfType("constraint"))
	t.Affinities = d.affinities(c.Blocks.OfType("affinity"))
	for _, vb := range c.Blocks.OfType("volume_mount") {
		t.VolumeMounts = append(t.VolumeMounts, d.volumeMount(vb))
	}
	if lb := d.single(c, "logs"); lb != nil {
		t.LogConfig = d.logs(lb)
	}
	if cb := d.single(c, "csi_plugin"); cb != nil {
		t.CSIPluginConfig = d.csiPlugin(cb)
	}
	if lb := d.single(c, "lifecycle"); lb != nil {
		t.Lifecycle = d.lifecycle(lb)
	}
	for _, ab := range c.Blocks.OfType("artifact") {
		t.Artifacts = append(t.Artifacts, d.artifact(ab))
	}
	t.Templates = d.templates(c.Blocks.OfType("template"))
	t.Services = d.services(c.Blocks.OfType("service"))
	t.DispatchPayload = d.dispatchPayload(d.single(c, "dispatch_payload"))
	d.identities(t, c.Blocks.OfType("identity"))
	return t, p
}

// parseErrorOf converts hcl diagnostics into a *ParseError positioned at
// the first error; Detail lists every error diagnostic.
func parseErrorOf(filename string, diags hcl.Diagnostics) *ParseError {
	pe := &ParseError{Filename: filename}
	var lines []string
	more := 0
	for _, diag := range diags {
		if diag.Severity != hcl.DiagError {
			continue
		}
		if len(lines) == maxDiagnostics {
			more++
			continue
		}
		text := diag.Summary
		if diag.Detail != "" {
			text += "; " + diag.Detail
		}
		if len(lines) == 0 {
			if diag.Subject != nil {
				pe.Line, pe.Column = diag.Subject.Start.Line, diag.Subject.Start.Column
			}
			lines = append(lines, text)
			continue
		}
		lines = append(lines, diagPos(diag)+text)
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("... and %d more errors", more))
	}
	pe.Detail = strings.Join(lines, "\n")
	return pe
}

func diagPos(diag *hcl.Diagnostic) string {
	if diag.Subject == nil {
		return ""
	}
	s := diag.Subject.Start
	return fmt.Sprintf("%s:%d:%d: ", diag.Subject.Filename, s.Line, s.Column)
}
