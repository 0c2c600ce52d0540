package jobspec

import (
	"fmt"
	"math"
	"strings"
)

// numberRule bounds a number of Nomad's job JSON that troupe reads past
// today (Nomad's client sends them with its defaults: an update block,
// the ephemeral disk, cores, shutdown delays, affinities, spreads). A
// value out of Nomad's range is refused as Nomad refuses it, so that a
// job accepted now stays valid once troupe implements the field.
type numberRule struct {
	path     string // dotted, "*" for every element of a list
	min, max float64
	nonZero  bool
}

const unbounded = math.MaxFloat64

// Durations are nanoseconds; none may be negative.
var nomadNumbers = func() []numberRule {
	var rules []numberRule
	update := []string{"MaxParallel", "Stagger", "MinHealthyTime", "HealthyDeadline", "ProgressDeadline", "Canary"}
	for _, at := range []string{"", "TaskGroups.*."} {
		for _, f := range update {
			rules = append(rules, numberRule{path: at + "Update." + f, max: unbounded})
		}
		rules = append(rules,
			numberRule{path: at + "Spreads.*.Weight", max: 100},
			numberRule{path: at + "Spreads.*.SpreadTarget.*.Percent", max: 100})
	}
	for _, at := range []string{"", "TaskGroups.*.", "TaskGroups.*.Tasks.*."} {
		rules = append(rules, numberRule{path: at + "Affinities.*.Weight", min: -100, max: 100, nonZero: true})
	}
	return append(rules,
		numberRule{path: "TaskGroups.*.EphemeralDisk.SizeMB", max: unbounded},
		numberRule{path: "TaskGroups.*.ShutdownDelay", max: unbounded},
		numberRule{path: "TaskGroups.*.MaxClientDisconnect", max: unbounded},
		numberRule{path: "TaskGroups.*.Tasks.*.ShutdownDelay", max: unbounded},
		numberRule{path: "TaskGroups.*.Tasks.*.Resources.Cores", max: unbounded},
		numberRule{path: "TaskGroups.*.Tasks.*.Resources.MemoryMaxMB", max: unbounded},
	)
}()

// checkNomadNumbers applies nomadNumbers to a decoded job object.
func checkNomadNumbers(job map[string]any) error {
	var problems []string
	for _, r := range nomadNumbers {
		visitAt(job, strings.Split(r.path, "."), "", func(where string, v any) {
			n, ok := v.(float64)
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s must be a number", where))
			case n < r.min || n > r.max || (r.nonZero && n == 0):
				problems = append(problems, fmt.Sprintf("%s %v is out of range: %s", where, n, r.describe()))
			}
		})
	}
	if len(problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: problems}
}

func (r numberRule) describe() string {
	var s string
	switch {
	case r.max == unbounded && r.min == 0:
		s = "it must not be negative"
	default:
		s = fmt.Sprintf("it must be between %v and %v", r.min, r.max)
	}
	if r.nonZero {
		s += " and not 0"
	}
	return s
}

// visitAt calls fn with every non-null value at path under v, naming each
// with its indices (TaskGroups[0].Update.MaxParallel).
func visitAt(v any, path []string, where string, fn func(string, any)) {
	if v == nil {
		return
	}
	if len(path) == 0 {
		fn(where, v)
		return
	}
	if path[0] == "*" {
		list, _ := v.([]any)
		for i, e := range list {
			visitAt(e, path[1:], fmt.Sprintf("%s[%d]", where, i), fn)
		}
		return
	}
	obj, _ := v.(map[string]any)
	next, ok := lookup(obj, path[0])
	if !ok {
		return
	}
	if where != "" {
		where += "."
	}
	visitAt(next, path[1:], where+path[0], fn)
}
