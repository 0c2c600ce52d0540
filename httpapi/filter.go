package httpapi

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/go-bexpr"

	"github.com/troupe-dev/troupe/messages"
)

// Nomad's list query parameters: ?filter= (a go-bexpr expression, checked
// against each item as the client sees it, that is against the JSON we
// answer for it, in Nomad's field names), ?per_page= and ?next_token=
// (paging, after the filter) and ?reverse=true.

// listQuery is a request's ?filter=, ?per_page=, ?next_token= and
// ?reverse=, read once before the handler runs.
type listQuery struct {
	filter  *bexpr.Evaluator // nil: no ?filter=
	expr    string           // the ?filter= expression (filter_fast.go)
	perPage int              // 0: one page with everything
	next    string           // "" : from the start
	reverse bool
}

// listParams are given once each; reverse is a boolParam.
var listParams = []string{"filter", "per_page", "next_token"}

// parseListQuery reads the list parameters: an expression that does not
// parse, or a per_page that is not a whole number, is an error (a 400).
func parseListQuery(q url.Values) (listQuery, error) {
	var lq listQuery
	if f := q.Get("filter"); f != "" {
		ev, err := bexpr.CreateEvaluator(f)
		if err != nil {
			return lq, filterErr(err)
		}
		lq.filter, lq.expr = ev, f
	}
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return lq, fmt.Errorf("invalid per_page %q: want a whole number from 0 to %d", v, math.MaxInt32)
		}
		lq.perPage = int(n)
	}
	lq.next = q.Get("next_token")
	lq.reverse, _ = strconv.ParseBool(q.Get("reverse"))
	return lq, nil
}

func filterErr(err error) error {
	return codeErr(http.StatusBadRequest, "failed to read filter expression: %v", err)
}

// filtered is the items that pass the request's ?filter= (all of them
// when there is none). An expression that cannot be evaluated against an
// item (a selector into a value that has no fields, a comparison of
// mismatched types) is a 400 naming the problem.
func filtered[T any](r *http.Request, items []T) ([]T, error) {
	lq := optsOf(r).list
	ev := lq.filter
	if ev == nil {
		return items, nil
	}
	out := items[:0:0]
	if fast := fastFilter(lq.expr, reflect.TypeFor[T]()); fast != nil {
		for _, it := range items {
			if v := reflect.ValueOf(it); !v.IsNil() && fast(v.Elem()) {
				out = append(out, it)
			}
		}
		return out, nil
	}
	for _, it := range items {
		ok, err := matches(ev, it)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, it)
		}
	}
	return out, nil
}

// matches evaluates ev against item's JSON, completed with the zero
// values of the fields the encoder leaves out when empty (so that
// `DeploymentID == ""` and `Meta.x == "y"` behave as on Nomad's structs).
func matches[T any](ev *bexpr.Evaluator, item T) (bool, error) {
	raw, err := messages.AppendJSON(nil, item)
	if err != nil {
		return false, err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return false, err
	}
	ok, err := ev.Evaluate(complete(doc, reflect.TypeOf(item)))
	if err != nil {
		return false, filterErr(err)
	}
	return ok, nil
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// complete fills into v, the decoded JSON of a value of type t, the
// fields that were left out, and makes null lists and maps empty ones.
func complete(v any, t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if encodesItself(t) {
		return v
	}
	switch t.Kind() {
	case reflect.Struct:
		if m, ok := v.(map[string]any); ok {
			completeStruct(m, t)
		}
	case reflect.Map:
		if v == nil {
			return map[string]any{}
		}
		if m, ok := v.(map[string]any); ok {
			for k, e := range m {
				m[k] = complete(e, t.Elem())
			}
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return v
		}
		if v == nil {
			return []any{}
		}
		if s, ok := v.([]any); ok {
			for i := range s {
				s[i] = complete(s[i], t.Elem())
			}
		}
	}
	return v
}

// completeStruct completes the JSON object m of a struct of type t,
// field by field as encoding/json names them.
func completeStruct(m map[string]any, t reflect.Type) {
	for _, f := range fieldsOf(t) {
		if v, ok := m[f.name]; ok {
			m[f.name] = complete(v, f.typ)
		} else if z, ok := zeroJSON(f.typ); ok {
			m[f.name] = z
		}
	}
}

// jsonField is a field of a struct's JSON object.
type jsonField struct {
	name string
	typ  reflect.Type
}

// structFields caches fieldsOf, by type.
var structFields sync.Map

// fieldsOf lists the fields of struct type t's JSON object as
// encoding/json names them, those of embedded structs among them.
func fieldsOf(t reflect.Type) []jsonField {
	if fs, ok := structFields.Load(t); ok {
		return fs.([]jsonField)
	}
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && opts == "" || strings.Contains(opts, "string") {
			continue
		}
		if f.Anonymous && name == "" {
			et := f.Type
			for et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct && !encodesItself(et) {
				out = append(out, fieldsOf(et)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name, f.Type})
	}
	structFields.Store(t, out)
	return out
}

// zeroJSON is the decoded JSON of a zero value of type t, for the kinds
// the encoder leaves out when empty; false for those it has no one
// answer for (pointers, interfaces, values that encode themselves).
func zeroJSON(t reflect.Type) (any, bool) {
	if encodesItself(t) {
		return nil, false
	}
	switch t.Kind() {
	case reflect.String:
		return "", true
	case reflect.Bool:
		return false, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return float64(0), true
	case reflect.Map:
		return map[string]any{}, true
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "", true
		}
		return []any{}, true
	case reflect.Struct:
		m := map[string]any{}
		completeStruct(m, t)
		return m, true
	}
	return nil, false
}

// selfEncoders caches encodesItself, by type.
var selfEncoders sync.Map

// encodesItself says whether t has its own JSON (or text) encoding.
func encodesItself(t reflect.Type) bool {
	if v, ok := selfEncoders.Load(t); ok {
		return v.(bool)
	}
	p := reflect.PointerTo(t)
	yes := t.Implements(jsonMarshaler) || p.Implements(jsonMarshaler) ||
		t.Implements(textMarshaler) || p.Implements(textMarshaler)
	selfEncoders.Store(t, yes)
	return yes
}
