package scheduler

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/go-version"
	"github.com/troupe-dev/troupe/messages"
)

// Constraint operands, spelled as Nomad's job specification spells them.
const (
	opEqual            = "="
	opEqualEqual       = "=="
	opIs               = "is"
	opNotEqual         = "!="
	opNot              = "not"
	opLess             = "<"
	opLessEqual        = "<="
	opGreater          = ">"
	opGreaterEqual     = ">="
	opRegexp           = "regexp"
	opVersion          = "version"
	opSemver           = "semver"
	opSetContains      = "set_contains"
	opSetContainsAll   = "set_contains_all"
	opSetContainsAny   = "set_contains_any"
	opIsSet            = "is_set"
	opIsNotSet         = "is_not_set"
	opDistinctHosts    = "distinct_hosts"
	opDistinctProperty = "distinct_property"
)

// constraintString prints a constraint as Nomad does in AllocMetric keys:
// "${attr.kernel.name} = linux".
func constraintString(c *messages.Constraint) string {
	return c.LTarget + " " + c.Operand + " " + c.RTarget
}

// isDynamic reports whether a constraint depends on other placements
// (and so cannot be memoised per node).
func isDynamic(c *messages.Constraint) bool {
	return c.Operand == opDistinctHosts || c.Operand == opDistinctProperty
}

// target is a parsed constraint target: a literal, a node variable
// (messages.ParseNodeVar: ${node.*}, ${attr.*}, ${meta.*}) or an unknown
// interpolation, which is never found.
type target struct {
	literal bool
	key     string // the literal
	node    messages.NodeVarRef
}

func parseTarget(s string) target {
	if !strings.HasPrefix(s, "${") {
		return target{literal: true, key: s}
	}
	inner, ok := strings.CutSuffix(s[2:], "}")
	if !ok {
		return target{} // unknown: never found
	}
	return target{node: messages.ParseNodeVar(inner)}
}

// resolve returns the target's value on node; an unknown interpolation,
// attribute or meta key is not found.
func (t target) resolve(n *messages.Node) (string, bool) {
	if t.literal {
		return t.key, true
	}
	return t.node.Get(n)
}

// resolveTarget turns a constraint target into its value on node.
func resolveTarget(s string, node *messages.Node) (string, bool) {
	return parseTarget(s).resolve(node)
}

// rule is a parsed per-node (memoisable) constraint and its reason key.
type rule struct {
	op     string
	l, r   target
	reason int
}

func newRule(c *messages.Constraint, reason int) rule {
	return rule{op: c.Operand, l: parseTarget(c.LTarget), r: parseTarget(c.RTarget), reason: reason}
}

// matcher checks constraints, caching compiled regexps and version
// constraints for the duration of one Process call.
type matcher struct {
	regexps  map[string]*regexp.Regexp
	versions map[string]version.Constraints
}

func newMatcher() *matcher {
	return &matcher{
		regexps:  map[string]*regexp.Regexp{},
		versions: map[string]version.Constraints{},
	}
}

// checkNode resolves both sides of c on node and checks the operand.
// distinct_hosts and distinct_property always pass here: they are checked
// against the plan elsewhere.
func (m *matcher) checkNode(c *messages.Constraint, node *messages.Node) bool {
	if isDynamic(c) {
		return true
	}
	r := newRule(c, 0)
	return m.checkRule(&r, node)
}

// checkRule resolves both sides of a parsed rule on node and checks it.
func (m *matcher) checkRule(r *rule, node *messages.Node) bool {
	l, lok := r.l.resolve(node)
	rv, rok := r.r.resolve(node)
	return m.check(r.op, l, rv, lok, rok)
}

// check applies operand to resolved values, following Nomad's
// checkConstraint.
func (m *matcher) check(op, l, r string, lok, rok bool) bool {
	both := lok && rok
	switch op {
	case opEqual, opEqualEqual, opIs:
		return both && l == r
	case opNotEqual, opNot:
		return lok != rok || l != r
	case opLess, opLessEqual, opGreater, opGreaterEqual:
		return both && checkOrder(op, l, r)
	case opIsSet:
		return lok
	case opIsNotSet:
		return !lok
	case opVersion:
		return both && m.checkVersion(l, r, false)
	case opSemver:
		return both && m.checkVersion(l, r, true)
	case opRegexp:
		return both && m.checkRegexp(l, r)
	case opSetContains, opSetContainsAll:
		return both && setContainsAll(l, r)
	case opSetContainsAny:
		return both && setContainsAny(l, r)
	case opDistinctHosts, opDistinctProperty:
		return true
	default:
		return false
	}
}

// checkOrder compares numerically when both sides parse as numbers, else
// lexically.
func checkOrder(op, l, r string) bool {
	if li, err := strconv.ParseInt(l, 10, 64); err == nil {
		if ri, err := strconv.ParseInt(r, 10, 64); err == nil {
			return order(op, cmpInt(li, ri))
		}
	}
	if lf, err := strconv.ParseFloat(l, 64); err == nil {
		if rf, err := strconv.ParseFloat(r, 64); err == nil {
			return order(op, cmpFloat(lf, rf))
		}
	}
	return order(op, strings.Compare(l, r))
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func order(op string, c int) bool {
	switch op {
	case opLess:
		return c < 0
	case opLessEqual:
		return c <= 0
	case opGreater:
		return c > 0
	default:
		return c >= 0
	}
}

func (m *matcher) checkRegexp(l, r string) bool {
	re, ok := m.regexps[r]
	if !ok {
		re, _ = regexp.Compile(r) // nil on a bad pattern: never matches
		m.regexps[r] = re
	}
	return re != nil && re.MatchString(l)
}

func (m *matcher) checkVersion(l, r string, semver bool) bool {
	var v *version.Version
	var err error
	if semver {
		v, err = version.NewSemver(l)
	} else {
		v, err = version.NewVersion(l)
	}
	if err != nil {
		return false
	}
	cs, ok := m.versions[r]
	if !ok {
		cs, _ = version.NewConstraint(r) // nil on a bad constraint
		m.versions[r] = cs
	}
	return cs != nil && cs.Check(v)
}

func splitSet(s string) []string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

func setContainsAll(l, r string) bool {
	have := splitSet(l)
	for _, want := range splitSet(r) {
		if !contains(have, want) {
			return false
		}
	}
	return true
}

func setContainsAny(l, r string) bool {
	have := splitSet(l)
	for _, want := range splitSet(r) {
		if contains(have, want) {
			return true
		}
	}
	return false
}

func contains(set []string, s string) bool {
	for _, x := range set {
		if x == s {
			return true
		}
	}
	return false
}
