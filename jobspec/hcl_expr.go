package jobspec

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// runtimeRoots are the variable namespaces that the scheduler or the client
// resolve later; the parser keeps references to them verbatim as "${...}".
var runtimeRoots = map[string]bool{
	"attr": true, "node": true, "meta": true, "device": true, "env": true,
}

func isRuntimeRoot(name string) bool {
	return runtimeRoots[name] ||
		strings.HasPrefix(name, "NOMAD_") || strings.HasPrefix(name, "TROUPE_")
}

// evaluator evaluates HCL expressions without variables or functions, except
// that runtime interpolations are rendered back to their source text.
type evaluator struct {
	src []byte
	// vars are the input variables' values, var.NAME (hcl_vars.go).
	vars map[string]cty.Value
}

// evalContext offers var.* to expressions.
func (ev evaluator) evalContext() *hcl.EvalContext {
	if len(ev.vars) == 0 {
		return nil
	}
	return &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(ev.vars)}}
}

// eval returns the value of expr. A reference to a runtime variable, alone or
// inside a string template, becomes the string "${<source text>}".
func (ev evaluator) eval(expr hcl.Expression) (cty.Value, hcl.Diagnostics) {
	switch e := expr.(type) {
	case *hclsyntax.ScopeTraversalExpr:
		if isRuntimeRoot(e.Traversal.RootName()) {
			return cty.StringVal("${" + ev.text(e.SrcRange) + "}"), nil
		}
	case *hclsyntax.TemplateWrapExpr:
		return ev.eval(e.Wrapped)
	case *hclsyntax.TemplateExpr:
		return ev.template(e)
	case *hclsyntax.ParenthesesExpr:
		return ev.eval(e.Expression)
	case *hclsyntax.TupleConsExpr:
		return ev.tuple(e)
	case *hclsyntax.ObjectConsExpr:
		return ev.object(e)
	}
	if diags := ev.checkVariables(expr); diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	return expr.Value(ev.evalContext())
}

func (ev evaluator) text(r hcl.Range) string {
	if r.Start.Byte < 0 || r.End.Byte > len(ev.src) || r.Start.Byte > r.End.Byte {
		return ""
	}
	return string(ev.src[r.Start.Byte:r.End.Byte])
}

func (ev evaluator) template(e *hclsyntax.TemplateExpr) (cty.Value, hcl.Diagnostics) {
	var b strings.Builder
	var diags hcl.Diagnostics
	for _, part := range e.Parts {
		v, d := ev.eval(part)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		s, err := convert.Convert(v, cty.String)
		if err != nil || s.IsNull() || !s.IsKnown() {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid template interpolation value",
				Detail:   fmt.Sprintf("Cannot include a %s in a string template.", v.Type().FriendlyName()),
				Subject:  part.Range().Ptr(),
			})
			continue
		}
		b.WriteString(s.AsString())
	}
	if diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	return cty.StringVal(b.String()), nil
}

func (ev evaluator) tuple(e *hclsyntax.TupleConsExpr) (cty.Value, hcl.Diagnostics) {
	vals := make([]cty.Value, 0, len(e.Exprs))
	var diags hcl.Diagnostics
	for _, x := range e.Exprs {
		v, d := ev.eval(x)
		diags = append(diags, d...)
		vals = append(vals, v)
	}
	if diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	return cty.TupleVal(vals), nil
}

func (ev evaluator) object(e *hclsyntax.ObjectConsExpr) (cty.Value, hcl.Diagnostics) {
	vals := make(map[string]cty.Value, len(e.Items))
	var diags hcl.Diagnostics
	for _, item := range e.Items {
		k, d := item.KeyExpr.Value(nil)
		diags = append(diags, d...)
		v, d2 := ev.eval(item.ValueExpr)
		diags = append(diags, d2...)
		if d.HasErrors() || d2.HasErrors() {
			continue
		}
		ks, err := convert.Convert(k, cty.String)
		if err != nil || ks.IsNull() {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid object key",
				Detail:   "Object keys must be strings.",
				Subject:  item.KeyExpr.Range().Ptr(),
			})
			continue
		}
		vals[ks.AsString()] = v
	}
	if diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	return cty.ObjectVal(vals), nil
}

// checkVariables explains references that plain evaluation cannot resolve:
// runtime variables used inside an operator or function, and unknown names.
func (ev evaluator) checkVariables(expr hcl.Expression) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, tr := range expr.Variables() {
		root := tr.RootName()
		d := &hcl.Diagnostic{Severity: hcl.DiagError, Subject: tr.SourceRange().Ptr()}
		switch {
		case root == "var":
			if ev.declares(tr) {
				continue
			}
			d.Summary = "Undeclared variable"
			d.Detail = fmt.Sprintf("%s is not declared: add a variable block for it.", ev.text(tr.SourceRange()))
		case isRuntimeRoot(root):
			d.Summary = "Runtime variable not allowed here"
			d.Detail = fmt.Sprintf("%q is resolved at run time; use it alone inside a string, as \"${%s}\".",
				root, ev.text(tr.SourceRange()))
		default:
			d.Summary = "Unknown variable"
			d.Detail = fmt.Sprintf("There is no variable named %q; input variables are var.*; runtime variables are attr.*, node.*, meta.*, device.*, env.*, NOMAD_* and TROUPE_*.", root)
		}
		diags = append(diags, d)
	}
	return diags
}

// declares tells whether tr is var.NAME for a declared variable NAME.
func (ev evaluator) declares(tr hcl.Traversal) bool {
	if len(tr) < 2 {
		return false
	}
	a, ok := tr[1].(hcl.TraverseAttr)
	if !ok {
		return false
	}
	_, ok = ev.vars[a.Name]
	return ok
}
