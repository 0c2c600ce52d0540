package jobspec

import (
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/go-version"
	"github.com/troupe-dev/troupe/messages"
)

func validateConstraints(c checker, name string, cs []*messages.Constraint) {
	for i, con := range cs {
		cc := c.at("%s[%d]", name, i)
		if con == nil {
			cc.addf("is missing")
			continue
		}
		validateOperand(cc, con.Operand, con.LTarget, con.RTarget)
	}
}

// validateOperand applies Nomad's constraint rules; an empty operand means
// "=" (Canonicalize fills it).
func validateOperand(c checker, op, l, r string) {
	needL := true
	switch op {
	case "", "=", "==", "is", "!=", "not", "<", "<=", ">", ">=":
		if r == "" {
			c.addf("operator %q requires a value", opName(op))
		}
	case "set_contains", "set_contains_all", "set_contains_any":
		if r == "" {
			c.addf("operator %q requires a value", op)
		}
	case "regexp":
		if _, err := regexp.Compile(r); err != nil {
			c.addf("regexp %q does not compile: %v", r, err)
		}
	case "version", "semver":
		if _, err := version.NewConstraint(r); err != nil {
			c.addf("%s constraint %q is invalid: %v", op, r, err)
		}
	case "distinct_hosts":
		needL = false
	case "distinct_property":
		if n, err := strconv.ParseUint(r, 10, 64); r != "" && (err != nil || n < 1) {
			c.addf("distinct_property limit %q must be a whole number of at least 1", r)
		}
	case "is_set", "is_not_set":
		if r != "" {
			c.addf("operator %q does not take a value", op)
		}
	default:
		c.addf("unknown operator %q", op)
		return
	}
	if needL && l == "" {
		c.addf("attribute must be set for operator %q", opName(op))
	}
}

func opName(op string) string {
	if op == "" {
		return defaultOperand
	}
	return op
}

func validateDevice(c checker, dev *messages.RequestedDevice) {
	if dev.Count < 1 {
		c.addf("count must be at least 1")
	}
	validateConstraints(c, "constraint", dev.Constraints)
	validateAffinities(c, dev.Affinities)
}

func validateRestart(c checker, rp *messages.RestartPolicy) {
	if rp == nil {
		return
	}
	if rp.Mode != "fail" && rp.Mode != "delay" {
		c.addf("mode %q must be \"fail\" or \"delay\"", rp.Mode)
	}
	if rp.Attempts < 0 {
		c.addf("attempts must not be negative")
	}
	nonNegative(c, "interval", rp.Interval)
	nonNegative(c, "delay", rp.Delay)
	if rp.Attempts > 0 && rp.Interval > 0 && int64(rp.Attempts)*rp.Delay > rp.Interval {
		c.addf("%d attempts with a delay of %v do not fit in an interval of %v",
			rp.Attempts, time.Duration(rp.Delay), time.Duration(rp.Interval))
	}
}

func validateReschedule(c checker, rp *messages.ReschedulePolicy) {
	if rp == nil {
		return
	}
	if !slices.Contains([]string{"constant", "exponential", "fibonacci"}, rp.DelayFunction) {
		c.addf("delay_function %q must be one of constant, exponential, fibonacci", rp.DelayFunction)
	}
	if rp.Attempts < 0 {
		c.addf("attempts must not be negative")
	}
	nonNegative(c, "interval", rp.Interval)
	nonNegative(c, "delay", rp.Delay)
	nonNegative(c, "max_delay", rp.MaxDelay)
	if rp.DelayFunction != "constant" && rp.MaxDelay > 0 && rp.MaxDelay < rp.Delay {
		c.addf("max_delay %v must not be less than delay %v", time.Duration(rp.MaxDelay), time.Duration(rp.Delay))
	}
}

func validateMigrate(c checker, m *messages.MigrateStrategy) {
	if m == nil {
		return
	}
	if m.MaxParallel < 0 {
		c.addf("max_parallel must not be negative")
	}
	if m.HealthCheck != "checks" && m.HealthCheck != "task_states" {
		c.addf("health_check %q must be \"checks\" or \"task_states\"", m.HealthCheck)
	}
	nonNegative(c, "min_healthy_time", m.MinHealthyTime)
	nonNegative(c, "healthy_deadline", m.HealthyDeadline)
	if m.HealthyDeadline > 0 && m.MinHealthyTime >= m.HealthyDeadline {
		c.addf("min_healthy_time must be less than healthy_deadline")
	}
}

func validateDisconnect(c checker, ds *messages.DisconnectStrategy) {
	if ds == nil {
		return
	}
	nonNegative(c, "lost_after", ds.LostAfter)
	nonNegative(c, "stop_on_client_after", ds.StopOnClientAfter)
	valid := []string{"best_score", "keep_original", "keep_replacement", "longest_running"}
	if ds.Reconcile != "" && !slices.Contains(valid, ds.Reconcile) {
		c.addf("reconcile %q must be one of best_score, keep_original, keep_replacement, longest_running", ds.Reconcile)
	}
}

func nonNegative(c checker, field string, ns int64) {
	if ns < 0 {
		c.addf("%s must not be negative", field)
	}
}
