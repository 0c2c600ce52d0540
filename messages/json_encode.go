package messages

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// MarshalJSON is json.Marshal with one difference: the bool and number
// fields of a generated messages type are written even when zero. The
// generated struct tags say omitempty, so encoding/json would drop a
// group's Count of 0, a job's Version 0 or Stop false; Nomad's client,
// whose fields are pointers there, would read nil ("no value") instead of
// 0, and jobspec.ParseJSON would fill a default in. Empty strings, lists
// and absent messages are still left out, and so is an affinity's Weight
// of 0 (unset: Canonicalize makes it 50, and Nomad refuses an explicit 0).
// Every other type (the HTTP API's own response shapes, structpb) keeps
// its tags. Integers are written exactly, whatever their size. The few
// unix-nanosecond fields that are times in Nomad's JSON (JSONTimeField)
// are written as RFC 3339 times.
//
// It is the one encoder for messages in JSON: the HTTP API writes its
// responses with it, and jobspec.EncodeJSON its job bodies.
func MarshalJSON(v any) ([]byte, error) { return AppendJSON(nil, v) }

// AppendJSON appends what MarshalJSON writes for v to b.
func AppendJSON(b []byte, v any) ([]byte, error) {
	return appendValue(b, reflect.ValueOf(v), 0)
}

// messagesPkg is the package whose zero bools and numbers are written.
var messagesPkg = reflect.TypeFor[Job]().PkgPath()

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// maxDepth bounds the nesting (a pointer cycle would otherwise overflow the
// stack, which a caller cannot recover from).
const maxDepth = 1000

// appendValue writes v. A struct that cannot hold a messages struct, or a
// value that encodes itself (MarshalJSON, MarshalText), goes to
// encoding/json whole, so our own shapes come out byte for byte as it
// writes them; lists, maps and scalars are written here.
func appendValue(b []byte, v reflect.Value, depth int) ([]byte, error) {
	if !v.IsValid() {
		return append(b, "null"...), nil
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("messages: response nested deeper than %d (a cycle?)", maxDepth)
	}
	depth++
	t := v.Type()
	if marshalsItself(t, v.CanAddr()) || (t.Kind() == reflect.Struct && !mayHoldMessages(t)) {
		return appendJSON(b, v)
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		return appendValue(b, v.Elem(), depth)
	case reflect.Struct:
		return appendStruct(b, v, depth)
	case reflect.Slice:
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return appendJSON(b, v) // base64, as encoding/json does
		}
		return appendElems(b, v, depth)
	case reflect.Array:
		return appendElems(b, v, depth)
	case reflect.Map:
		return appendMap(b, v, depth)
	case reflect.Bool:
		return strconv.AppendBool(b, v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	case reflect.String:
		return appendString(b, v.String()), nil
	default: // floats, and whatever encoding/json refuses
		return appendJSON(b, v)
	}
}

// appendJSON writes v with encoding/json.
func appendJSON(b []byte, v reflect.Value) ([]byte, error) {
	if v.CanAddr() && !v.Type().Implements(marshalerType) && !v.Type().Implements(textMarshalerType) &&
		marshalsItself(reflect.PointerTo(v.Type()), false) {
		v = v.Addr() // encoding/json calls pointer methods of addressable values
	}
	if !v.CanInterface() { // behind an unexported embedded struct
		return nil, fmt.Errorf("messages: cannot encode a %s reached through an unexported field", v.Type())
	}
	raw, err := json.Marshal(v.Interface())
	return append(b, raw...), err
}

func appendElems(b []byte, v reflect.Value, depth int) ([]byte, error) {
	b = append(b, '[')
	for i := range v.Len() {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendValue(b, v.Index(i), depth); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendMap writes a map with string or integer keys, sorted as
// encoding/json sorts them; other maps go to encoding/json whole.
func appendMap(b []byte, v reflect.Value, depth int) ([]byte, error) {
	if v.IsNil() {
		return append(b, "null"...), nil
	}
	var key func(reflect.Value) string
	switch kt := v.Type().Key(); {
	case kt.Implements(textMarshalerType) || reflect.PointerTo(kt).Implements(textMarshalerType):
		return appendJSON(b, v)
	case kt.Kind() == reflect.String:
		key = reflect.Value.String
	case kt.Kind() >= reflect.Int && kt.Kind() <= reflect.Int64:
		key = func(k reflect.Value) string { return strconv.FormatInt(k.Int(), 10) }
	case kt.Kind() >= reflect.Uint && kt.Kind() <= reflect.Uintptr:
		key = func(k reflect.Value) string { return strconv.FormatUint(k.Uint(), 10) }
	default:
		return appendJSON(b, v)
	}
	type entry struct {
		k string
		v reflect.Value
	}
	entries := make([]entry, 0, v.Len())
	for it := v.MapRange(); it.Next(); {
		entries = append(entries, entry{key(it.Key()), it.Value()})
	}
	slices.SortFunc(entries, func(x, y entry) int { return strings.Compare(x.k, y.k) })
	b = append(b, '{')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, e.k)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, e.v, depth); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendString writes s quoted; what needs escaping (controls, quotes,
// backslashes, HTML characters, non-ASCII) goes through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			raw, _ := json.Marshal(s) // a string always encodes
			return append(b, raw...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendStruct(b []byte, v reflect.Value, depth int) ([]byte, error) {
	b = append(b, '{')
	first := true
	for _, f := range structFields(v.Type()) {
		fv, ok := fieldByIndex(v, f.index)
		if !ok || ((f.omitEmpty || f.asTime) && isEmpty(fv)) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, f.quoted...)
		b = append(b, ':')
		if f.asTime {
			b = appendString(b, JSONTime(fv.Int()))
			continue
		}
		var err error
		if b, err = appendValue(b, fv, depth); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return append(b, '}'), nil
}

// fieldByIndex is v.FieldByIndex that reports a nil embedded pointer
// (encoding/json skips the fields behind it) instead of panicking.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
