package jobspec

import (
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/gocty"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// attrSpec maps one HCL attribute onto one proto field (by its PascalCase
// name). dur marks an int64 field written in HCL as a duration string.
type attrSpec struct {
	name  string
	field string
	dur   bool
}

// blockSpec describes an HCL block type allowed in a body.
type blockSpec struct {
	name   string
	labels []string
}

// schemaOf builds the hcl schema for the given attributes and blocks; every
// attribute is optional.
func schemaOf(attrs []attrSpec, blocks ...blockSpec) *hcl.BodySchema {
	s := &hcl.BodySchema{}
	for _, a := range attrs {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: a.name})
	}
	for _, b := range blocks {
		s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: b.name, LabelNames: b.labels})
	}
	return s
}

// hclDecoder turns hcl bodies into messages, collecting diagnostics.
type hclDecoder struct {
	ev    evaluator
	diags hcl.Diagnostics
}

// content decodes body against schema; the Nomad blocks and arguments
// that hclRefused lists for schema are refused by name.
func (d *hclDecoder) content(body hcl.Body, schema *hcl.BodySchema) *hcl.BodyContent {
	refused := d.refuseUnsupported(body, schema)
	c, diags := body.Content(schema)
	d.add(dropAt(diags, refused))
	if c == nil {
		c = &hcl.BodyContent{Attributes: hcl.Attributes{}}
	}
	return c
}

// eval evaluates an attribute; ok is false (and a diagnostic recorded) when
// it cannot be used.
func (d *hclDecoder) eval(a *hcl.Attribute) (cty.Value, bool) {
	v, diags := d.ev.eval(a.Expr)
	d.add(diags)
	if diags.HasErrors() {
		return cty.NilVal, false
	}
	if v.IsNull() {
		d.errorf(a.Expr.Range(), "Invalid value", "Attribute %q must not be null.", a.Name)
		return cty.NilVal, false
	}
	return v, true
}

func (d *hclDecoder) errorf(r hcl.Range, summary, format string, args ...any) {
	if len(d.diags) > 10*maxDiagnostics {
		return // parseErrorOf shows the first ones; a flood costs memory
	}
	d.diags = append(d.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  r.Ptr(),
	})
}

// decodeAttrs sets msg's fields from the attributes named in specs and
// returns the set of fields that were present.
func (d *hclDecoder) decodeAttrs(attrs hcl.Attributes, specs []attrSpec, msg proto.Message) fieldSet {
	m := msg.ProtoReflect()
	fields := m.Descriptor().Fields()
	present := fieldSet{}
	for _, s := range specs {
		a, ok := attrs[s.name]
		if !ok {
			continue
		}
		fd := fields.ByName(protoreflect.Name(s.field))
		if fd == nil {
			panic("jobspec: no field " + s.field + " in " + string(m.Descriptor().Name()))
		}
		if v, ok := d.protoValue(a, m, fd, s.dur); ok {
			m.Set(fd, v)
			present.add(s.field)
		}
	}
	return present
}

func (d *hclDecoder) protoValue(a *hcl.Attribute, m protoreflect.Message, fd protoreflect.FieldDescriptor, dur bool) (protoreflect.Value, bool) {
	if fd.IsList() {
		var list []string
		if !d.convert(a, cty.List(cty.String), &list) {
			return protoreflect.Value{}, false
		}
		l := m.NewField(fd).List()
		for _, s := range list {
			l.Append(protoreflect.ValueOfString(s))
		}
		return protoreflect.ValueOfList(l), true
	}
	switch fd.Kind() {
	case protoreflect.StringKind:
		var s string
		ok := d.convert(a, cty.String, &s)
		return protoreflect.ValueOfString(s), ok
	case protoreflect.BoolKind:
		var b bool
		ok := d.convert(a, cty.Bool, &b)
		return protoreflect.ValueOfBool(b), ok
	case protoreflect.Int32Kind:
		var i int32
		ok := d.convert(a, cty.Number, &i)
		return protoreflect.ValueOfInt32(i), ok
	case protoreflect.Uint64Kind:
		var u uint64
		ok := d.convert(a, cty.Number, &u)
		return protoreflect.ValueOfUint64(u), ok
	case protoreflect.Int64Kind:
		if dur {
			ns, ok := d.duration(a)
			return protoreflect.ValueOfInt64(ns), ok
		}
		var i int64
		ok := d.convert(a, cty.Number, &i)
		return protoreflect.ValueOfInt64(i), ok
	}
	panic("jobspec: unsupported field kind " + fd.Kind().String())
}

// convert evaluates a, converts it to ty and stores it in the Go value out.
func (d *hclDecoder) convert(a *hcl.Attribute, ty cty.Type, out any) bool {
	v, ok := d.eval(a)
	if !ok {
		return false
	}
	cv, err := convert.Convert(v, ty)
	if err == nil {
		err = gocty.FromCtyValue(cv, out)
	}
	if err != nil {
		d.errorf(a.Expr.Range(), "Incorrect attribute value type",
			"Inappropriate value for attribute %q: %s.", a.Name, err)
		return false
	}
	return true
}

func (d *hclDecoder) str(a *hcl.Attribute) (string, bool) {
	var s string
	ok := d.convert(a, cty.String, &s)
	return s, ok
}

// duration reads a Go duration string such as "30s" or "1h30m".
func (d *hclDecoder) duration(a *hcl.Attribute) (int64, bool) {
	s, ok := d.str(a)
	if !ok {
		return 0, false
	}
	dur, err := time.ParseDuration(s)
	if err != nil {
		d.errorf(a.Expr.Range(), "Invalid duration",
			"Attribute %q: %s; use a duration like \"30s\" or \"1h30m\".", a.Name, err)
		return 0, false
	}
	return int64(dur), true
}

// stringMap reads a block of free attributes (meta, env) as strings.
func (d *hclDecoder) stringMap(block *hcl.Block) map[string]string {
	attrs, diags := block.Body.JustAttributes()
	d.add(diags)
	out := make(map[string]string, len(attrs))
	for name, a := range attrs {
		if s, ok := d.str(a); ok {
			out[name] = s
		}
	}
	return out
}

// single returns the only block of type t, or nil; duplicates are errors.
func (d *hclDecoder) single(c *hcl.BodyContent, t string) *hcl.Block {
	blocks := c.Blocks.OfType(t)
	for _, dup := range blocks[min(1, len(blocks)):] {
		d.errorf(dup.DefRange, "Duplicate "+t+" block",
			"Only one %q block is allowed here; the first is at %s.", t, blocks[0].DefRange)
	}
	if len(blocks) == 0 {
		return nil
	}
	return blocks[0]
}

// add keeps diags, up to ten times what parseErrorOf shows: a file that
// makes a million errors must not make a million diagnostics.
func (d *hclDecoder) add(diags hcl.Diagnostics) {
	if room := 10*maxDiagnostics - len(d.diags); room > 0 {
		d.diags = append(d.diags, diags[:min(len(diags), room)]...)
	}
}
