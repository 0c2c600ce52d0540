package jobspec

import (
	"slices"

	"github.com/troupe-dev/troupe/messages"
)

// validateAffinities applies Nomad's affinity rules: a constraint operator
// other than distinct_hosts and distinct_property, with its attribute and
// value, and a weight from -100 to 100 that is not 0.
func validateAffinities(c checker, affs []*messages.Affinity) {
	for i, a := range affs {
		ac := c.at("affinity[%d]", i)
		if a == nil {
			ac.addf("is missing")
			continue
		}
		if slices.Contains([]string{"distinct_hosts", "distinct_property"}, a.Operand) {
			ac.addf("operator %q is not allowed in an affinity", a.Operand)
		} else {
			validateOperand(ac, a.Operand, a.LTarget, a.RTarget)
		}
		if a.Weight < -100 || a.Weight > 100 || a.Weight == 0 {
			ac.addf("weight %d must be between -100 and 100 and not 0", a.Weight)
		}
	}
}

// validateSpreads applies Nomad's spread rules: an attribute, a weight
// from 1 to 100 (Canonicalize makes an absent one 50), target values
// given once each, with percents from 0 to 100 that add up to at most 100.
func validateSpreads(c checker, spreads []*messages.Spread) {
	for i, sp := range spreads {
		sc := c.at("spread[%d]", i)
		if sp == nil {
			sc.addf("is missing")
			continue
		}
		if sp.Attribute == "" {
			sc.addf("attribute must be set")
		}
		if sp.Weight < 1 || sp.Weight > 100 {
			sc.addf("weight %d must be between 1 and 100", sp.Weight)
		}
		seen := map[string]bool{}
		total := 0
		for j, t := range sp.SpreadTarget {
			if t == nil {
				sc.at("target[%d]", j).addf("is missing")
				continue
			}
			tc := sc.at("target %s", shown(t.Value))
			if seen[t.Value] {
				tc.addf("value is given more than once")
			}
			seen[t.Value] = true
			if t.Percent < 0 || t.Percent > 100 {
				tc.addf("percent %d must be between 0 and 100", t.Percent)
			}
			total += int(t.Percent)
		}
		if total > 100 {
			sc.addf("the target percents add up to %d, over 100", total)
		}
	}
}
