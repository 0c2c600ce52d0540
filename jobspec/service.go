package jobspec

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// Services (Nomad's service and check blocks) with Nomad's own provider:
// troupe keeps the registrations in raft and runs the checks on the
// client. Provider "consul" is refused: troupe has no Consul.

// ServiceProviderNomad is the one provider; an unset provider means it.
const ServiceProviderNomad = "nomad"

// Check types troupe runs.
const (
	CheckHTTP   = "http"
	CheckTCP    = "tcp"
	CheckScript = "script"
)

// Address modes of a service or a check.
const (
	AddressModeAuto  = "auto"
	AddressModeHost  = "host"
	AddressModeAlloc = "alloc"
)

const defaultCheckGrace = int64(1e9) // Nomad's check_restart grace

var (
	serviceAttrs = []attrSpec{
		{name: "name", field: "Name"}, {name: "port", field: "PortLabel"},
		{name: "tags", field: "Tags"}, {name: "canary_tags", field: "CanaryTags"},
		{name: "address_mode", field: "AddressMode"}, {name: "address", field: "Address"},
		{name: "provider", field: "Provider"}, {name: "task", field: "TaskName"},
		{name: "on_update", field: "OnUpdate"},
	}
	checkAttrs = []attrSpec{
		{name: "name", field: "Name"}, {name: "type", field: "Type"},
		{name: "command", field: "Command"}, {name: "args", field: "Args"},
		{name: "path", field: "Path"}, {name: "protocol", field: "Protocol"},
		{name: "port", field: "PortLabel"}, {name: "address_mode", field: "AddressMode"},
		{name: "interval", field: "Interval", dur: true}, {name: "timeout", field: "Timeout", dur: true},
		{name: "method", field: "Method"}, {name: "task", field: "TaskName"},
		{name: "initial_status", field: "InitialStatus"}, {name: "body", field: "Body"},
		{name: "on_update", field: "OnUpdate"}, {name: "notes", field: "Notes"},
		{name: "tls_skip_verify", field: "TLSSkipVerify"},
	}
	checkRestartAttrs = []attrSpec{
		{name: "limit", field: "Limit"}, {name: "grace", field: "Grace", dur: true},
		{name: "ignore_warnings", field: "IgnoreWarnings"},
	}
	serviceSchema = schemaOf(serviceAttrs, blockSpec{name: "check"}, blockSpec{name: "check_restart"},
		blockSpec{name: "meta"})
	checkSchema = schemaOf(checkAttrs, blockSpec{name: "check_restart"}, blockSpec{name: "header"})
)

func init() {
	hclRefused[serviceSchema] = []string{"connect", "canary_meta", "tagged_addresses",
		"enable_tag_override", "identity", "weights", "cluster", "kind"}
	hclRefused[checkSchema] = []string{"expose", "advertise", "grpc_service", "grpc_use_tls",
		"tls_server_name", "success_before_passing", "failures_before_critical",
		"failures_before_warning"}
	for _, s := range []*hcl.BodySchema{serviceSchema, checkSchema} {
		hclRefusedSet[s] = map[string]bool{}
		for _, n := range hclRefused[s] {
			hclRefusedSet[s][n] = true
		}
	}
}

func (d *hclDecoder) services(blocks hcl.Blocks) []*messages.Service {
	var out []*messages.Service
	for _, b := range blocks {
		s := &messages.Service{}
		c := d.content(b.Body, serviceSchema)
		d.decodeAttrs(c.Attributes, serviceAttrs, s)
		if m := d.single(c, "meta"); m != nil {
			s.Meta = d.stringMap(m)
		}
		s.CheckRestart = d.checkRestart(d.single(c, "check_restart"))
		for _, cb := range c.Blocks.OfType("check") {
			s.Checks = append(s.Checks, d.check(cb))
		}
		out = append(out, s)
	}
	return out
}

func (d *hclDecoder) check(b *hcl.Block) *messages.ServiceCheck {
	ck := &messages.ServiceCheck{}
	c := d.content(b.Body, checkSchema)
	d.decodeAttrs(c.Attributes, checkAttrs, ck)
	ck.CheckRestart = d.checkRestart(d.single(c, "check_restart"))
	if hb := d.single(c, "header"); hb != nil {
		attrs, diags := hb.Body.JustAttributes()
		d.add(diags)
		ck.Header = map[string]*messages.HeaderValues{}
		for name, a := range attrs {
			var vs []string
			if d.convert(a, cty.List(cty.String), &vs) {
				ck.Header[name] = &messages.HeaderValues{Values: vs}
			}
		}
	}
	return ck
}

func (d *hclDecoder) checkRestart(b *hcl.Block) *messages.CheckRestart {
	if b == nil {
		return nil
	}
	cr := &messages.CheckRestart{}
	if !d.decodeAttrs(d.content(b.Body, schemaOf(checkRestartAttrs)).Attributes, checkRestartAttrs, cr).has("Grace") {
		cr.Grace = defaultCheckGrace
	}
	return cr
}

// canonServices fills Nomad's service defaults: a name from the job,
// group and task, address mode auto, provider nomad; each check gets a
// name, the service's port and address mode, the http protocol and
// method, and the service's check_restart merged under its own.
func canonServices(job *messages.Job) {
	for _, g := range job.TaskGroups {
		if g == nil {
			continue
		}
		for _, s := range g.Services {
			canonService(s, fmt.Sprintf("%s-%s", job.Name, g.Name))
		}
		for _, t := range g.Tasks {
			if t == nil {
				continue
			}
			for _, s := range t.Services {
				canonService(s, fmt.Sprintf("%s-%s-%s", job.Name, g.Name, t.Name))
			}
		}
	}
}

func canonService(s *messages.Service, defName string) {
	if s == nil {
		return
	}
	setDefault(&s.Name, defName)
	setDefault(&s.AddressMode, AddressModeAuto)
	setDefault(&s.Provider, ServiceProviderNomad)
	setDefault(&s.OnUpdate, "require_healthy")
	for _, ck := range s.Checks {
		if ck == nil {
			continue
		}
		setDefault(&ck.Name, fmt.Sprintf("service: %q check", s.Name))
		if ck.Type == CheckHTTP {
			setDefault(&ck.Protocol, "http")
			setDefault(&ck.Method, "GET")
		}
		setDefault(&ck.OnUpdate, s.OnUpdate)
		ck.CheckRestart = mergeCheckRestart(s.CheckRestart, ck.CheckRestart)
	}
}

// mergeCheckRestart is Nomad's CheckRestart.Merge: the check's own
// non-zero values over the service's.
func mergeCheckRestart(svc, own *messages.CheckRestart) *messages.CheckRestart {
	if svc == nil {
		return own
	}
	out := proto.Clone(svc).(*messages.CheckRestart)
	if own == nil {
		return out
	}
	if own.Limit > 0 {
		out.Limit = own.Limit
	}
	if own.Grace != 0 {
		out.Grace = own.Grace
	}
	if own.IgnoreWarnings {
		out.IgnoreWarnings = true
	}
	return out
}
