package jobspec

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// Parameterized jobs (Nomad's parameterized block) and a task's
// dispatch_payload block: a parameterized job runs only as the children
// `job dispatch` creates, each with its payload and meta.

// The values of a parameterized block's payload.
const (
	DispatchPayloadOptional  = "optional"
	DispatchPayloadRequired  = "required"
	DispatchPayloadForbidden = "forbidden"
)

var (
	parameterizedAttrs = []attrSpec{
		{name: "payload", field: "Payload"}, {name: "meta_required", field: "MetaRequired"},
		{name: "meta_optional", field: "MetaOptional"},
	}
	parameterizedSchema   = schemaOf(parameterizedAttrs)
	dispatchPayloadAttrs  = []attrSpec{{name: "file", field: "File"}}
	dispatchPayloadSchema = schemaOf(dispatchPayloadAttrs)
)

func (d *hclDecoder) parameterized(b *hcl.Block) *messages.ParameterizedJobConfig {
	if b == nil {
		return nil
	}
	p := &messages.ParameterizedJobConfig{}
	d.decodeAttrs(d.content(b.Body, parameterizedSchema).Attributes, parameterizedAttrs, p)
	return p
}

func (d *hclDecoder) dispatchPayload(b *hcl.Block) *messages.DispatchPayloadConfig {
	if b == nil {
		return nil
	}
	p := &messages.DispatchPayloadConfig{}
	d.decodeAttrs(d.content(b.Body, dispatchPayloadSchema).Attributes, dispatchPayloadAttrs, p)
	return p
}

// canonParameterized fills Nomad's default: the payload is optional.
func canonParameterized(p *messages.ParameterizedJobConfig) {
	if p != nil {
		setDefault(&p.Payload, DispatchPayloadOptional)
	}
}

// validateParameterized applies Nomad's rules: batch jobs only, not
// periodic as well, a known payload mode, and a meta key either
// required or optional, not both.
func validateParameterized(c checker, job *messages.Job) {
	p := job.GetParameterizedJob()
	if p == nil {
		return
	}
	pc := c.at("parameterized")
	if job.Type != TypeBatch {
		pc.addf("can only be used with %q jobs, not %q", TypeBatch, job.Type)
	}
	if job.GetPeriodic().GetEnabled() {
		pc.addf("a job can not be both periodic and parameterized")
	}
	switch p.Payload {
	case "", DispatchPayloadOptional, DispatchPayloadRequired, DispatchPayloadForbidden:
	default:
		pc.addf("payload %q must be one of %q, %q or %q", p.Payload,
			DispatchPayloadOptional, DispatchPayloadRequired, DispatchPayloadForbidden)
	}
	required := map[string]bool{}
	for _, k := range p.MetaRequired {
		if k == "" {
			pc.addf("meta_required has an empty key")
		}
		required[k] = true
	}
	for _, k := range p.MetaOptional {
		if k == "" {
			pc.addf("meta_optional has an empty key")
		}
		if required[k] {
			pc.addf("meta key %q is both required and optional", k)
		}
	}
}

// validateDispatchPayloads checks each task's dispatch_payload block: in
// a parameterized job, a file name that stays inside the task's local/
// directory.
func validateDispatchPayloads(c checker, job *messages.Job) {
	for _, g := range job.GetTaskGroups() {
		for _, t := range g.GetTasks() {
			if t.GetDispatchPayload() != nil {
				validateDispatchPayload(c.at("group %s: task %s: dispatch_payload", shown(g.GetName()), shown(t.GetName())), job, t)
			}
		}
	}
}

func validateDispatchPayload(dc checker, job *messages.Job, t *messages.Task) {
	dp := t.GetDispatchPayload()
	if job.GetParameterizedJob() == nil {
		dc.addf("can only be used in a parameterized job")
	}
	if p := textProblem(dp.File, dc.lim().MaxNameLength); p != "" {
		dc.addf("file %s", p)
		return
	}
	if dp.File == "" {
		dc.addf("file must be set")
		return
	}
	if clean, err := safepath.CleanRel(dp.File); err != nil || clean == "." {
		dc.addf("file %q must name a file inside the task's local directory", dp.File)
	}
}
