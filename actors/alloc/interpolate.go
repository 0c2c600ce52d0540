package alloc

import (
	"strings"

	"github.com/troupe-dev/troupe/messages"
)

// refs are what a task's config and env strings may refer to: the task's
// environment (env), then the node's variables (messages.NodeVar; none
// while node is nil).
type refs struct {
	env  map[string]string
	node *messages.Node
}

// lookup finds name: env.NAME (or env["NAME"]) and a bare NAME in env,
// else a node variable.
func (v refs) lookup(name string) (string, bool) {
	key := strings.TrimPrefix(name, "env.")
	if k, ok := strings.CutPrefix(name, `env["`); ok && strings.HasSuffix(k, `"]`) {
		key = strings.TrimSuffix(k, `"]`)
	}
	if val, ok := v.env[key]; ok {
		return val, true
	}
	return messages.NodeVar(v.node, name)
}

// interpolate replaces each ${NAME} in s with NAME's value (refs.lookup),
// in one pass (a value is never interpolated again). A reference that is
// not known stays as written, as Nomad leaves it, so that a shell in the
// task can still expand it.
func interpolate(s string, v refs) string {
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
		if val, ok := v.lookup(name); ok {
			b.WriteString(val)
		} else {
			b.WriteString(s[i : i+3+end])
		}
		s = s[i+3+end:]
		i = strings.Index(s, "${")
	}
	b.WriteString(s)
	return b.String()
}

// interpolateConfig returns a copy of a task's driver config with every
// string in it (map values and list items, nested ones too) interpolated;
// keys and other values are kept.
func interpolateConfig(cfg map[string]any, v refs) map[string]any {
	if cfg == nil {
		return nil
	}
	out := make(map[string]any, len(cfg))
	for k, val := range cfg {
		out[k] = interpolateValue(val, v)
	}
	return out
}

// interpolateValue is val with its strings interpolated: a string, or a
// copy of a list or map; any other value as it is.
func interpolateValue(val any, v refs) any {
	switch val := val.(type) {
	case string:
		return interpolate(val, v)
	case []any:
		out := make([]any, len(val))
		for i, e := range val {
			out[i] = interpolateValue(e, v)
		}
		return out
	case map[string]any:
		return interpolateConfig(val, v)
	default:
		return val
	}
}
