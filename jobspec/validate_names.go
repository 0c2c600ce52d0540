package jobspec

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The rules for the names in a job. Group, task and volume names become
// parts of paths and environment variables on the client, so they are
// plain file names: no separator, no NUL or control character, not "."
// or "..", valid UTF-8. A job ID is never used as a path by troupe and
// may hold "/" (periodic and dispatched children are "<id>/periodic-..."),
// but follows Nomad's rule: no spaces, NUL or control characters.

// nameProblem says what is wrong with a name of a path element ("" when
// nothing is), with max its longest length in bytes.
func nameProblem(name string, max int) string {
	if p := textProblem(name, max); p != "" {
		return p
	}
	switch {
	case name == "." || name == "..":
		return fmt.Sprintf("must not be %q", name)
	case strings.ContainsAny(name, `/\`):
		return "must not contain / or \\"
	}
	return ""
}

const problemSpaces = "must not contain spaces"

// idProblem is nameProblem for job IDs: "/" allowed, spaces not.
func idProblem(id string, max int) string {
	if p := textProblem(id, max); p != "" {
		return p
	}
	if strings.ContainsFunc(id, unicode.IsSpace) {
		return problemSpaces
	}
	return ""
}

// textProblem holds the rules every name and identifier shares: valid
// UTF-8, at most max bytes, no NUL or other control character.
func textProblem(s string, max int) string {
	switch {
	case !utf8.ValidString(s):
		return "must be valid UTF-8"
	case len(s) > max:
		return fmt.Sprintf("must be at most %d characters (got %d)", max, len(s))
	case strings.ContainsRune(s, 0):
		return "must not contain a NUL character"
	case strings.ContainsFunc(s, unicode.IsControl):
		return "must not contain control characters (newlines, tabs, ...)"
	}
	return ""
}

// shown quotes a name for a message, cut short when it is long (a 1 MiB
// name must not make a 1 MiB error).
func shown(s string) string {
	const most = 64
	if len(s) <= most {
		return fmt.Sprintf("%q", s)
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:cut], len(s))
}

// checkStringMap applies the limits to a meta or env map; env also
// refuses keys with "=" (execve could not pass them).
func checkStringMap(c checker, field string, m map[string]string, l Limits, env bool) {
	if len(m) > l.MaxMetaEntries {
		c.addf("%s has %d entries, over the limit of %d", field, len(m), l.MaxMetaEntries)
		return
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		kc := c.at("%s[%s]", field, shown(k))
		switch {
		case k == "":
			kc.addf("key must not be empty")
		case textProblem(k, l.MaxMetaKeyLength) != "":
			kc.addf("key %s", textProblem(k, l.MaxMetaKeyLength))
		case env && strings.Contains(k, "="):
			kc.addf("key must not contain =")
		}
		if !utf8.ValidString(v) {
			kc.addf("value must be valid UTF-8")
		} else if len(v) > l.MaxMetaValueLength {
			kc.addf("value must be at most %d bytes (got %d)", l.MaxMetaValueLength, len(v))
		} else if strings.ContainsRune(v, 0) {
			kc.addf("value must not contain a NUL character")
		}
	}
}
