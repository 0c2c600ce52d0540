package template

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/template"
)

// funcs are the functions a template may call: consul-template's names
// for the ones Nomad jobs use without Consul or Vault.
func (r *renderer) funcs() template.FuncMap {
	return template.FuncMap{
		"env":              func(k string) string { return r.spec.Env[k] },
		"nomadVar":         r.nomadVar,
		"nomadVarExists":   r.nomadVarExists,
		"nomadVarList":     r.nomadVarList,
		"nomadVarListSafe": r.nomadVarList,
		"toLower":          strings.ToLower,
		"toUpper":          strings.ToUpper,
		"toTitle":          strings.ToTitle,
		"trimSpace":        strings.TrimSpace,
		"trim":             func(cut, s string) string { return strings.Trim(s, cut) },
		"trimPrefix":       func(p, s string) string { return strings.TrimPrefix(s, p) },
		"trimSuffix":       func(p, s string) string { return strings.TrimSuffix(s, p) },
		"split":            func(sep, s string) []string { return strings.Split(s, sep) },
		"join":             func(sep string, parts []string) string { return strings.Join(parts, sep) },
		"replaceAll":       func(old, new, s string) string { return strings.ReplaceAll(s, old, new) },
		"contains":         func(sub, s string) bool { return strings.Contains(s, sub) },
		"containsAny":      func(chars, s string) bool { return strings.ContainsAny(s, chars) },
		"toJSON":           toJSON,
		"toJSONPretty":     toJSONPretty,
		"base64Encode":     func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"base64Decode":     base64Decode,
		"base64URLEncode":  func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) },
		"base64URLDecode":  base64URLDecode,
		"parseInt":         func(s string) (int64, error) { return strconv.ParseInt(strings.TrimSpace(s), 10, 64) },
		"parseUint":        func(s string) (uint64, error) { return strconv.ParseUint(strings.TrimSpace(s), 10, 64) },
		"parseFloat":       func(s string) (float64, error) { return strconv.ParseFloat(strings.TrimSpace(s), 64) },
		"parseBool":        func(s string) (bool, error) { return strconv.ParseBool(strings.TrimSpace(s)) },
		"parseJSON":        parseJSON,
		"add":              func(a, b int) int { return a + b },
		"subtract":         func(a, b int) int { return b - a },
		"multiply":         func(a, b int) int { return a * b },
	}
}

func toJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("toJSON: %w", err)
	}
	return string(b), nil
}

func toJSONPretty(v any) (string, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", fmt.Errorf("toJSONPretty: %w", err)
	}
	return string(b), nil
}

func parseJSON(s string) (any, error) {
	var out any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("parseJSON: %w", err)
	}
	return out, nil
}

func base64Decode(s string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("base64Decode: %w", err)
	}
	return string(b), nil
}

func base64URLDecode(s string) (string, error) {
	b, err := base64.URLEncoding.DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("base64URLDecode: %w", err)
	}
	return string(b), nil
}
