package jobspec

import (
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/troupe-dev/troupe/messages"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Input variables, as Nomad's HCL2 job files have them: a file declares
// `variable "name" { type = ..., default = ..., description = ... }`
// and refers to `var.name`; values come from the default, a var-file's
// content (`name = value` lines) and -var NAME=VALUE flags, the later
// winning. A flag's value is the string itself for a string (or untyped)
// variable and an HCL expression for any other type. A value for a
// variable the file does not declare, one that does not convert to its
// type, and a variable left without a value are errors.

// Variables are the values given to a job file's variable blocks.
type Variables struct {
	// Flags are -var NAME=VALUE flags.
	Flags map[string]string
	// File is a var-file's content.
	File string
}

var variableSchema = schemaOf([]attrSpec{{name: "type"}, {name: "default"}, {name: "description"}})

// declaredVar is one variable block.
type declaredVar struct {
	block *hcl.Block
	typ   cty.Type
	value cty.Value // cty.NilVal: no value yet
}

// ParseWithVariables is Parse for a file that declares input variables,
// given their values.
func ParseWithVariables(filename string, src []byte, vars Variables) (*messages.Job, error) {
	return parse(filename, src, vars)
}

// variables decodes the variable blocks and sets the evaluator's var.*
// values from vars.
func (d *hclDecoder) variables(blocks hcl.Blocks, vars Variables) {
	declared := map[string]*declaredVar{}
	for _, b := range blocks {
		name := b.Labels[0]
		if !hclsyntax.ValidIdentifier(name) {
			d.errorf(b.LabelRanges[0], "Invalid variable name", "%q is not a valid identifier.", name)
			continue
		}
		if prev, dup := declared[name]; dup {
			d.errorf(b.DefRange, "Duplicate variable block", "Variable %q is declared already at %s.", name, prev.block.DefRange)
			continue
		}
		declared[name] = d.declaredVar(b)
	}
	d.varFileValues(vars.File, declared)
	names := make([]string, 0, len(vars.Flags))
	for name := range vars.Flags {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		d.flagValue(name, vars.Flags[name], declared)
	}
	values := map[string]cty.Value{}
	for name, v := range declared {
		if v.value == cty.NilVal {
			d.errorf(v.block.DefRange, "Unset variable", "Variable %q has no default: give it a value with -var %s=VALUE or a var-file.", name, name)
			continue
		}
		values[name] = v.value
	}
	d.ev.vars = values
}

func (d *hclDecoder) declaredVar(b *hcl.Block) *declaredVar {
	v := &declaredVar{block: b, typ: cty.DynamicPseudoType}
	c := d.content(b.Body, variableSchema)
	if a, ok := c.Attributes["type"]; ok {
		t, diags := typeexpr.TypeConstraint(a.Expr)
		d.add(diags)
		if !diags.HasErrors() {
			v.typ = t
		}
	}
	if a, ok := c.Attributes["description"]; ok {
		if s, ok := d.eval(a); ok && s.Type() != cty.String {
			d.errorf(a.Expr.Range(), "Invalid description", "A variable's description must be a string.")
		}
	}
	if a, ok := c.Attributes["default"]; ok {
		if val, ok := d.eval(a); ok {
			d.setVar(v, b.Labels[0], val, a.Expr.Range().Ptr())
		}
	}
	return v
}

// setVar converts val to v's type and keeps it.
func (d *hclDecoder) setVar(v *declaredVar, name string, val cty.Value, at *hcl.Range) {
	conv, err := convert.Convert(val, v.typ)
	if err != nil {
		d.add(hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid value for variable",
			Detail: fmt.Sprintf("Variable %q: %v.", name, err), Subject: at}})
		return
	}
	v.value = conv
}

func (d *hclDecoder) varFileValues(src string, declared map[string]*declaredVar) {
	if src == "" {
		return
	}
	const filename = "variables.hcl"
	if pe := checkHCLShape(filename, []byte(src)); pe != nil {
		d.add(hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid variables", Detail: pe.Error()}})
		return
	}
	f, diags := hclsyntax.ParseConfig([]byte(src), filename, hcl.Pos{Line: 1, Column: 1})
	d.add(diags)
	if diags.HasErrors() {
		return
	}
	attrs, diags := f.Body.JustAttributes()
	d.add(diags)
	for name, a := range attrs {
		v, ok := declared[name]
		if !ok {
			d.errorf(a.NameRange, "Undeclared variable", "A value is given for variable %q, which the job file does not declare.", name)
			continue
		}
		val, diags := a.Expr.Value(nil)
		d.add(diags)
		if !diags.HasErrors() {
			d.setVar(v, name, val, a.Expr.Range().Ptr())
		}
	}
}

func (d *hclDecoder) flagValue(name, raw string, declared map[string]*declaredVar) {
	v, ok := declared[name]
	if !ok {
		d.add(hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Undeclared variable",
			Detail: fmt.Sprintf("-var %s=... is given, but the job file declares no variable %q.", name, name)}})
		return
	}
	if v.typ == cty.String || v.typ == cty.DynamicPseudoType {
		d.setVar(v, name, cty.StringVal(raw), nil)
		return
	}
	expr, diags := hclsyntax.ParseExpression([]byte(raw), "-var "+name, hcl.Pos{Line: 1, Column: 1})
	if !diags.HasErrors() {
		var val cty.Value
		val, diags = expr.Value(nil)
		if !diags.HasErrors() {
			d.setVar(v, name, val, nil)
			return
		}
	}
	d.add(hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid value for variable",
		Detail: fmt.Sprintf("-var %s=%q is not a valid %s: %s", name, raw, v.typ.FriendlyName(), diags.Error())}})
}
