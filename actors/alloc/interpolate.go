package alloc

import (
	"strings"

	"github.com/troupe-dev/troupe/messages"
)

// nodeVars are the node's values that a task's config and env may refer
// to, under Nomad's names: node.unique.id, node.unique.name,
// node.datacenter, node.region, node.class, node.pool, attr.<name> for
// every attribute and meta.<key> for every meta entry. Nil: none.
func nodeVars(n *messages.Node) map[string]string {
	if n == nil {
		return nil
	}
	out := make(map[string]string, 6+len(n.GetAttributes())+len(n.GetMeta()))
	for k, v := range n.GetAttributes() {
		out["attr."+k] = v
	}
	for k, v := range n.GetMeta() {
		out["meta."+k] = v
	}
	out["node.unique.id"] = n.GetID()
	out["node.unique.name"] = n.GetName()
	out["node.datacenter"] = n.GetDatacenter()
	out["node.class"] = n.GetNodeClass()
	out["node.pool"] = n.GetNodePool()
	out["node.region"] = n.GetRegion()
	return out
}

// interpolate replaces each ${NAME} in s with NAME's value in the first of
// vars that has it, in one pass (a value is never interpolated again). A
// reference that none has stays as written, as Nomad leaves it, so that
// a shell in the task can still expand it.
func interpolate(s string, vars ...map[string]string) string {
	i := strings.Index(s, "${")
	if i < 0 {
		return s
	}
	var b strings.Builder
	for i >= 0 {
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			break
		}
		name := s[i+2 : i+2+end]
		b.WriteString(s[:i])
		if v, ok := lookupVar(name, vars); ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+3+end])
		}
		s = s[i+3+end:]
		i = strings.Index(s, "${")
	}
	b.WriteString(s)
	return b.String()
}

// lookupVar finds name in the first of vars that has it. The index form
// root["key"] is root.key, and env.NAME (or env["NAME"]) is NAME: the
// task's environment variable.
func lookupVar(name string, vars []map[string]string) (string, bool) {
	if root, rest, ok := strings.Cut(name, "[\""); ok && strings.HasSuffix(rest, "\"]") {
		name = root + "." + strings.TrimSuffix(rest, "\"]")
	}
	name = strings.TrimPrefix(name, "env.")
	for _, m := range vars {
		if v, ok := m[name]; ok {
			return v, true
		}
	}
	return "", false
}

// interpolateConfig returns a copy of a task's driver config with every
// string in it (map values and list items, nested ones too) interpolated;
// keys and other values are kept.
func interpolateConfig(cfg map[string]any, vars ...map[string]string) map[string]any {
	if cfg == nil {
		return nil
	}
	out := make(map[string]any, len(cfg))
	for k, v := range cfg {
		out[k] = interpolateValue(v, vars)
	}
	return out
}

// interpolateValue is v with its strings interpolated: a string, or a
// copy of a list or map; any other value as it is.
func interpolateValue(v any, vars []map[string]string) any {
	switch v := v.(type) {
	case string:
		return interpolate(v, vars...)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = interpolateValue(e, vars)
		}
		return out
	case map[string]any:
		return interpolateConfig(v, vars...)
	default:
		return v
	}
}
