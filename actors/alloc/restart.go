package alloc

import (
	"fmt"
	"time"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// decision is what the restart policy says after a task ended.
type decision struct {
	Restart bool
	Delay   time.Duration
	// Failed is true when the task will not run again and that is a failure.
	Failed bool
	Reason string
}

// restartTracker applies a task's restart policy (Nomad's semantics): up to
// Attempts restarts within Interval, each after Delay; then mode "fail"
// fails the task, mode "delay" waits for the interval to end and starts
// counting again. A batch task that exits 0 is complete and not restarted;
// a service task is restarted whatever its exit code.
type restartTracker struct {
	policy  *messages.RestartPolicy
	batch   bool
	count   int
	started time.Time
}

// newRestartTracker returns a tracker for the policy.
func newRestartTracker(p *messages.RestartPolicy, jobType string) *restartTracker {
	if p == nil {
		p = &messages.RestartPolicy{Attempts: 2, Interval: int64(30 * time.Minute), Delay: int64(15 * time.Second), Mode: "fail"}
	}
	return &restartTracker{policy: p, batch: jobType == "batch"}
}

// Count is how many restarts the current interval has used.
func (r *restartTracker) Count() int { return r.count }

// Next decides what happens after a task ended with res (nil res: the
// driver failed to start it) at now.
func (r *restartTracker) Next(res *driver.ExitResult, now time.Time) decision {
	if res != nil && res.Successful() && r.batch {
		return decision{Reason: "Exit Code: 0"}
	}
	interval := time.Duration(r.policy.Interval)
	if r.started.IsZero() || (interval > 0 && now.Sub(r.started) >= interval) {
		r.started = now
		r.count = 0
	}
	reason := exitReason(res)
	if int32(r.count) < r.policy.Attempts {
		r.count++
		return decision{Restart: true, Delay: time.Duration(r.policy.Delay), Reason: reason}
	}
	if r.policy.Mode == "delay" {
		wait := interval - now.Sub(r.started)
		if wait < time.Duration(r.policy.Delay) {
			wait = time.Duration(r.policy.Delay)
		}
		r.started = now.Add(wait)
		r.count = 0
		return decision{Restart: true, Delay: wait, Reason: reason + "; restarts exceeded, waiting for the interval"}
	}
	return decision{Failed: true, Reason: reason + "; exceeded allowed attempts " + fmt.Sprint(r.policy.Attempts) + " in interval " + interval.String()}
}

func exitReason(res *driver.ExitResult) string {
	switch {
	case res == nil:
		return "failed to start"
	case res.Err != nil:
		return "error: " + res.Err.Error()
	case res.OOMKilled:
		return oomKilledMessage
	case res.Signal != 0:
		return fmt.Sprintf("Exit Code: %d, Signal: %d", res.ExitCode, res.Signal)
	default:
		return fmt.Sprintf("Exit Code: %d", res.ExitCode)
	}
}
