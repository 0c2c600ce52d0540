package httpapi

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/troupe-dev/troupe/messages"
)

// Responses are written as encoding/json writes them, with one difference:
// the bool and number fields of a generated messages type are written even
// when zero. The generated struct tags say omitempty, so encoding/json
// would drop a group's Count of 0, a job's Version 0 or Stop false, and
// Nomad's client, whose fields are pointers there, would read nil ("no
// value") instead of 0. Empty strings, lists and absent messages are still
// left out, and every other type (our own response shapes, structpb) keeps
// its tags. The few unix-nanosecond fields that are times in Nomad's JSON
// (messages.JSONTimeField) are written as RFC 3339 times.

// messagesPkg is the package whose zero bools and numbers are written.
var messagesPkg = reflect.TypeFor[messages.Job]().PkgPath()

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// maxDepth bounds the nesting (a pointer cycle would otherwise overflow the
// stack, which net/http cannot recover from).
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
		return nil, fmt.Errorf("httpapi: response nested deeper than %d (a cycle?)", maxDepth)
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
		return nil, fmt.Errorf("httpapi: cannot encode a %s reached through an unexported field", v.Type())
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
			b = appendString(b, messages.JSONTime(fv.Int()))
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
				omitEmpty: strings.Contains(","+opts+",", ",omitempty,") && !(inMessages && isScalar(sf.Type)),
				asTime:    inMessages && sf.Type.Kind() == reflect.Int64 && messages.JSONTimeField(t.Name(), sf.Name),
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

// writeJSON writes a response body; indent pretty-prints it.
func writeJSON(w io.Writer, v any, indent bool) error {
	bp := bufPool.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxPooledBuf {
			bufPool.Put(bp)
		}
	}()
	raw, err := appendValue((*bp)[:0], reflect.ValueOf(v), 0)
	if err != nil {
		return err
	}
	*bp = raw
	if indent {
		var buf bytes.Buffer
		if err := json.Indent(&buf, raw, "", "    "); err != nil {
			return err
		}
		raw = buf.Bytes()
	}
	_, err = w.Write(append(raw, '\n'))
	return err
}

// bufPool keeps response buffers (up to maxPooledBuf) between requests.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxPooledBuf = 4 << 20
