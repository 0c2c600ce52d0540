package alloc

import "time"

// Service checks: the pure part. A checkTracker folds each probe's
// outcome into the check's status and decides check_restart: after Limit
// consecutive failures (warnings too unless IgnoreWarnings), not counting
// those within Grace of the check's start or of its last restart, the
// task is restarted and the count begins again.

// Check statuses, as Nomad's client reports them
// (/v1/client/allocation/:id/checks).
const (
	CheckPending = "pending"
	CheckSuccess = "success"
	CheckFailure = "failure"
)

// probeResult is what one probe found.
type probeResult int

const (
	probePassing probeResult = iota
	probeWarning
	probeCritical
)

var probeResultNames = map[probeResult]string{probePassing: "passing", probeWarning: "warning", probeCritical: "critical"}

func (r probeResult) String() string { return probeResultNames[r] }

// checkOutcome is a probe's answer: its result, what it said and the HTTP
// status (http checks).
type checkOutcome struct {
	result probeResult
	output string
	code   int
	at     time.Time
}

// checkTracker is one check's history.
type checkTracker struct {
	limit          int
	grace          time.Duration
	ignoreWarnings bool

	graceFrom time.Time // the check's start, or its last restart
	failures  int       // consecutive, outside the grace
	status    string
}

func newCheckTracker(limit int, grace time.Duration, ignoreWarnings bool, start time.Time) *checkTracker {
	return &checkTracker{limit: limit, grace: grace, ignoreWarnings: ignoreWarnings, graceFrom: start, status: CheckPending}
}

// Step records an outcome: the check's status now, and whether its task
// is to be restarted.
func (t *checkTracker) Step(o checkOutcome) (status string, restart bool) {
	t.status = CheckSuccess
	if o.result != probePassing {
		t.status = CheckFailure
	}
	bad := o.result == probeCritical || (o.result == probeWarning && !t.ignoreWarnings)
	switch {
	case !bad:
		t.failures = 0
	case o.at.Before(t.graceFrom.Add(t.grace)):
		// within the grace: not counted
	default:
		t.failures++
	}
	if t.limit > 0 && t.failures >= t.limit {
		t.failures = 0
		t.graceFrom = o.at
		return t.status, true
	}
	return t.status, false
}
