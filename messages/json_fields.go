package messages

import (
	"reflect"
	"slices"
	"strings"
	"sync"
)

// How MarshalJSON sees a struct type: its JSON members, and whether a
// value of it can hold a messages struct at all (if not, encoding/json
// writes it whole).

// zeroMeansUnset lists, by message name, the number fields whose zero
// means "not set" (jobspec.Canonicalize fills the default) and whose
// explicit 0 Nomad, and so jobspec.ParseJSON, refuses: they keep omitempty.
var zeroMeansUnset = map[string]map[string]bool{
	"Affinity": {"Weight": true},
}

// field is one JSON member of a struct type.
type field struct {
	name      string
	quoted    []byte
	index     []int
	omitEmpty bool
	asTime    bool // unix nanos written as an RFC 3339 time, left out when 0
}

var fieldCache sync.Map // reflect.Type -> []field

// structFields lists a struct type's JSON members as encoding/json does:
// exported fields in declaration order, "-" skipped, untagged embedded
// structs flattened in place, and of several fields with one name the
// shallowest wins (a tagged one among equals; a tie drops them all).
// omitempty holds only outside the messages package.
func structFields(t reflect.Type) []field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	type candidate struct {
		field
		depth  int
		tagged bool
	}
	var all []candidate
	var walk func(t reflect.Type, index []int, depth int)
	walk = func(t reflect.Type, index []int, depth int) {
		inMessages := t.PkgPath() == messagesPkg
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if sf.Anonymous && name == "" && ft.Kind() == reflect.Struct {
				if depth < 16 {
					walk(ft, append(slices.Clone(index), i), depth+1)
				}
				continue
			}
			if !sf.IsExported() {
				continue
			}
			tagged := name != ""
			if !tagged {
				name = sf.Name
			}
			all = append(all, candidate{field: field{
				name:      name,
				quoted:    appendString(nil, name),
				index:     append(slices.Clone(index), i),
				omitEmpty: strings.Contains(","+opts+",", ",omitempty,") && !(inMessages && isScalar(sf.Type) && !zeroMeansUnset[t.Name()][sf.Name]),
				asTime:    inMessages && sf.Type.Kind() == reflect.Int64 && JSONTimeField(t.Name(), sf.Name),
			}, depth: depth, tagged: tagged})
		}
	}
	walk(t, nil, 0)
	var out []field
	for _, c := range all {
		dominant := true
		for _, o := range all {
			if o.name != c.name || slices.Equal(o.index, c.index) {
				continue
			}
			if o.depth < c.depth || (o.depth == c.depth && (o.tagged || !c.tagged)) {
				dominant = false // shallower, tagged among equals, or a tie
				break
			}
		}
		if dominant {
			out = append(out, c.field)
		}
	}
	fs, _ := fieldCache.LoadOrStore(t, out)
	return fs.([]field)
}

// marshalsItself reports whether encoding/json would call t's MarshalJSON
// or MarshalText (a pointer method too, when the value is addressable).
func marshalsItself(t reflect.Type, addressable bool) bool {
	if t.Implements(marshalerType) || t.Implements(textMarshalerType) {
		return true
	}
	if addressable && t.Kind() != reflect.Pointer {
		pt := reflect.PointerTo(t)
		return pt.Implements(marshalerType) || pt.Implements(textMarshalerType)
	}
	return false
}

var holdsCache sync.Map // reflect.Type -> bool

// mayHoldMessages reports whether a value of type t can hold a messages
// struct that does not encode itself (an interface always may).
func mayHoldMessages(t reflect.Type) bool {
	if h, ok := holdsCache.Load(t); ok {
		return h.(bool)
	}
	h := holds(t, map[reflect.Type]bool{})
	holdsCache.Store(t, h)
	return h
}

func holds(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] { // a recursive type: its other fields decide
		return false
	}
	seen[t] = true
	if marshalsItself(t, true) {
		return false
	}
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return holds(t.Elem(), seen)
	case reflect.Struct:
		if t.PkgPath() == messagesPkg {
			return true
		}
		for i := range t.NumField() {
			if holds(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

// isScalar reports a bool or number type, whose zero the messages types
// write. Their empty strings, lists and absent messages stay out: Nomad's
// client takes "" for a time in places where we keep text, and null or
// absent mean the same to it.
func isScalar(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}
