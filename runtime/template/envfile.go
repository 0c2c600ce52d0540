package template

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseEnv reads a rendered env template (env = true): KEY=VALUE lines,
// with blank lines and # comments skipped, an optional "export ", and
// values optionally in double quotes (Go escapes) or single quotes
// (taken as written).
func ParseEnv(data []byte) (map[string]string, error) {
	out := map[string]string{}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || !validEnvName(k) {
			return nil, fmt.Errorf("template: env line %d: want KEY=VALUE, got %q", n+1, line)
		}
		v = strings.TrimSpace(v)
		switch {
		case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
			u, err := strconv.Unquote(v)
			if err != nil {
				return nil, fmt.Errorf("template: env line %d: %s: %w", n+1, k, err)
			}
			v = u
		case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
			v = v[1 : len(v)-1]
		}
		out[k] = v
	}
	return out, nil
}

func validEnvName(k string) bool {
	if k == "" {
		return false
	}
	for i, c := range k {
		alpha := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !alpha && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
