package jobspec

import (
	"fmt"
	"sort"
	"strings"
)

// checkUnsupported walks a decoded JSON job along nomadFields and returns
// an *UnsupportedError naming every field that is set (not zero) and that
// troupe does not implement, or that is no field of Nomad's job API at all.
// Zero values (null, false, 0, "", [], {} and objects of zero values) pass:
// Nomad's client sends many of them for fields the user left unset.
func checkUnsupported(job map[string]any) error {
	w := unsupportedWalk{}
	w.element(job, "Job", "", "")
	if len(w.problems) == 0 {
		return nil
	}
	return &UnsupportedError{Problems: w.problems}
}

type unsupportedWalk struct{ problems []string }

// element walks one object of a Nomad type; jobs, groups and tasks are
// named by their ID or Name in the path, other objects by field.
func (w *unsupportedWalk) element(obj map[string]any, typ, where, field string) {
	switch typ {
	case "Job":
		w.object(obj, typ, fmt.Sprintf("job %q", nameOf(obj, "ID")), "")
	case "TaskGroup":
		w.object(obj, typ, fmt.Sprintf("%s: group %q", where, nameOf(obj, "Name")), "")
	case "Task":
		w.object(obj, typ, fmt.Sprintf("%s: task %q", where, nameOf(obj, "Name")), "")
	default:
		w.object(obj, typ, where, field+".")
	}
}

func nameOf(obj map[string]any, key string) string {
	s, _ := lookupValue(obj, key).(string)
	return s
}

func (w *unsupportedWalk) object(obj map[string]any, typ, where, prefix string) {
	rules := nomadFields[typ]
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := obj[k]
		if isZeroJSON(v) {
			continue
		}
		name, rule, known := ruleFor(rules, k)
		field := prefix + name
		switch {
		case !known:
			w.problems = append(w.problems, fmt.Sprintf("%s: %s is not a field of Nomad's job API that troupe knows", where, field))
		case rule.kind == kindRefused && (rule.allow == nil || !rule.allow(v)):
			why := rule.why
			if why == "" {
				why = field + " is not supported yet"
			}
			w.problems = append(w.problems, where+": "+why)
		case rule.of != "":
			w.nested(v, rule, where, field)
		}
	}
}

// nested walks the value of a field whose rule names a Nomad type: an
// object, a list of objects, or (dict) a map of objects.
func (w *unsupportedWalk) nested(v any, r fieldRule, where, field string) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			if m, ok := e.(map[string]any); ok {
				w.element(m, r.of, where, fmt.Sprintf("%s[%d]", field, i))
			}
		}
	case map[string]any:
		if !r.dict {
			w.element(x, r.of, where, field)
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if m, ok := x[k].(map[string]any); ok {
				w.element(m, r.of, where, fmt.Sprintf("%s[%q]", field, k))
			}
		}
	}
}

// ruleFor finds key's rule as encoding/json matches fields: exactly, then
// ignoring case. name is the field's Nomad spelling.
func ruleFor(rules map[string]fieldRule, key string) (name string, r fieldRule, ok bool) {
	if r, ok = rules[key]; ok {
		return key, r, true
	}
	for name, r := range rules {
		if strings.EqualFold(name, key) {
			return name, r, true
		}
	}
	return key, fieldRule{}, false
}

// isZeroJSON reports whether a decoded JSON value is what Nomad's client
// sends for an unset field.
func isZeroJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case float64:
		return x == 0
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		for _, e := range x {
			if !isZeroJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}
