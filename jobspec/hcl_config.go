package jobspec

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"google.golang.org/protobuf/types/known/structpb"
)

// config decodes a task's free-form driver config. Attributes become
// values; a nested block becomes an object, a block type that repeats
// becomes a list of objects, and block labels nest as object keys
// (`mount "a" { ... }` -> {"mount": {"a": {...}}}).
func (d *hclDecoder) config(b *hcl.Block) *structpb.Struct {
	return d.freeBody(b.Body)
}

func (d *hclDecoder) freeBody(body hcl.Body) *structpb.Struct {
	out := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return out
	}
	for name, a := range sb.Attributes {
		if v, ok := d.eval(a.AsHCLAttribute()); ok {
			if pv, ok := d.structValue(v, a.Expr.Range()); ok {
				out.Fields[name] = pv
			}
		}
	}
	for _, blk := range sb.Blocks {
		if a, clash := sb.Attributes[blk.Type]; clash {
			d.errorf(blk.DefRange(), "Duplicate config key",
				"%q is set as an attribute at %s and as a block.", blk.Type, a.SrcRange)
			continue
		}
		path := append([]string{blk.Type}, blk.Labels...)
		if !addBlock(out.Fields, path, d.freeBody(blk.Body)) {
			d.errorf(blk.DefRange(), "Conflicting config block",
				"Block %q conflicts with another block of the same type.", blk.Type)
		}
	}
	return out
}

// addBlock stores a decoded block at path (its type, then its labels): the
// first at a path is an object, repeats turn it into a list of objects.
// It reports false when a label path runs into a non-object value.
func addBlock(fields map[string]*structpb.Value, path []string, body *structpb.Struct) bool {
	for _, key := range path[:len(path)-1] {
		node, ok := fields[key]
		if !ok {
			node = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{}})
			fields[key] = node
		}
		if node.GetStructValue() == nil {
			return false
		}
		fields = node.GetStructValue().Fields
	}
	leaf := path[len(path)-1]
	v := structpb.NewStructValue(body)
	switch old, ok := fields[leaf]; {
	case !ok:
		fields[leaf] = v
	case old.GetListValue() != nil:
		old.GetListValue().Values = append(old.GetListValue().Values, v)
	default:
		fields[leaf] = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{old, v}})
	}
	return true
}

// structValue converts a cty value to a protobuf Value.
func (d *hclDecoder) structValue(v cty.Value, r hcl.Range) (*structpb.Value, bool) {
	if v.IsNull() {
		return structpb.NewNullValue(), true
	}
	if !v.IsKnown() {
		d.errorf(r, "Invalid config value", "The value is not known.")
		return nil, false
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return structpb.NewStringValue(v.AsString()), true
	case ty == cty.Bool:
		return structpb.NewBoolValue(v.True()), true
	case ty == cty.Number:
		f, _ := v.AsBigFloat().Float64()
		return structpb.NewNumberValue(f), true
	case ty.IsTupleType() || ty.IsListType() || ty.IsSetType():
		list := &structpb.ListValue{}
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			pv, ok := d.structValue(ev, r)
			if !ok {
				return nil, false
			}
			list.Values = append(list.Values, pv)
		}
		return structpb.NewListValue(list), true
	case ty.IsObjectType() || ty.IsMapType():
		s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			pv, ok := d.structValue(ev, r)
			if !ok {
				return nil, false
			}
			s.Fields[k.AsString()] = pv
		}
		return structpb.NewStructValue(s), true
	}
	d.errorf(r, "Invalid config value", "Values of type %s are not supported in config.", ty.FriendlyName())
	return nil, false
}
