package scheduler

import (
	"fmt"
	"slices"
	"time"

	"github.com/troupe-dev/troupe/messages"
)

const (
	// rescheduleWindow: a failed alloc due within it is rescheduled now.
	rescheduleWindow = time.Second
	// followupBatchWindow: delayed reschedules this close share one eval.
	followupBatchWindow = 5 * time.Second
	// maxPastRescheduleEvents kept by an unlimited policy.
	maxPastRescheduleEvents = 5
)

// rescheduleTime returns when a failed alloc may be replaced under policy
// and whether it may be replaced at all (Nomad's NextRescheduleTime).
func rescheduleTime(a *messages.Allocation, policy *messages.ReschedulePolicy, now time.Time) (time.Time, bool) {
	if policy == nil || (!policy.Unlimited && policy.Attempts <= 0) {
		return time.Time{}, false
	}
	failTime := lastEventTime(a, now)
	delay := nextDelay(a, policy, failTime)
	at := failTime.Add(delay)
	if policy.Unlimited {
		return at, true
	}
	events := a.GetRescheduleTracker().GetEvents()
	if len(events) == 0 {
		return at, true
	}
	attempted := 0
	for _, ev := range events {
		if policy.Interval <= 0 || failTime.UnixNano()-ev.RescheduleTime < policy.Interval {
			attempted++
		}
	}
	ok := attempted < int(policy.Attempts) &&
		(policy.Interval <= 0 || int64(delay) < policy.Interval)
	return at, ok
}

// lastEventTime is when the alloc last changed on the client: the latest
// task finish, else its modify time, else now.
func lastEventTime(a *messages.Allocation, now time.Time) time.Time {
	var last time.Time
	for _, ts := range a.TaskStates {
		if ts == nil || ts.FinishedAt == "" {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, ts.FinishedAt); err == nil && t.After(last) {
			last = t
		}
	}
	switch {
	case !last.IsZero():
		return last
	case a.ModifyTime != 0:
		return time.Unix(0, a.ModifyTime)
	}
	return now
}

// nextDelay is Nomad's NextDelay: the policy delay grown by its delay
// function over past reschedules, capped by MaxDelay (and reset to Delay
// once the alloc ran longer than the cap since the last reschedule).
func nextDelay(a *messages.Allocation, policy *messages.ReschedulePolicy, failTime time.Time) time.Duration {
	delay := policy.Delay
	events := a.GetRescheduleTracker().GetEvents()
	if len(events) == 0 {
		return time.Duration(delay)
	}
	last := events[len(events)-1]
	switch policy.DelayFunction {
	case "exponential":
		delay = last.Delay * 2
	case "fibonacci":
		if len(events) >= 2 {
			n1, n2 := last.Delay, events[len(events)-2].Delay
			if n2 == policy.MaxDelay && n1 == policy.Delay {
				delay = n1 // the series was reset: start again
			} else {
				delay = n1 + n2
			}
		}
	default:
		return time.Duration(delay)
	}
	if policy.MaxDelay > 0 && delay > policy.MaxDelay {
		delay = policy.MaxDelay
		if failTime.UnixNano()-last.RescheduleTime > delay {
			delay = policy.Delay
		}
	}
	return time.Duration(delay)
}

// nextTracker is the replacement's tracker: prev's recent events plus one
// for this reschedule (Nomad's updateRescheduleTracker).
func nextTracker(prev *messages.Allocation, policy *messages.ReschedulePolicy, now time.Time) *messages.RescheduleTracker {
	var events []*messages.RescheduleEvent
	past := prev.GetRescheduleTracker().GetEvents()
	if policy != nil && !policy.Unlimited && policy.Attempts > 0 {
		for _, ev := range past {
			if policy.Interval > 0 && now.UnixNano()-ev.RescheduleTime <= policy.Interval {
				events = append(events, cloneEvent(ev))
			}
		}
	} else {
		for _, ev := range past[max(0, len(past)-maxPastRescheduleEvents):] {
			events = append(events, cloneEvent(ev))
		}
	}
	var delay time.Duration
	if policy != nil {
		delay = nextDelay(prev, policy, lastEventTime(prev, now))
	}
	events = append(events, &messages.RescheduleEvent{
		RescheduleTime: now.UnixNano(),
		PrevAllocID:    prev.ID,
		PrevNodeID:     prev.NodeID,
		Delay:          int64(delay),
	})
	return &messages.RescheduleTracker{Events: events}
}

func cloneEvent(ev *messages.RescheduleEvent) *messages.RescheduleEvent {
	return &messages.RescheduleEvent{RescheduleTime: ev.RescheduleTime,
		PrevAllocID: ev.PrevAllocID, PrevNodeID: ev.PrevNodeID, Delay: ev.Delay}
}

// penaltyNodes are the nodes a rescheduled alloc already failed on.
func penaltyNodes(prev *messages.Allocation) []string {
	nodes := []string{prev.NodeID}
	for _, ev := range prev.GetRescheduleTracker().GetEvents() {
		if !slices.Contains(nodes, ev.PrevNodeID) {
			nodes = append(nodes, ev.PrevNodeID)
		}
	}
	return nodes
}

// delayed is a failed alloc to reschedule at a later time.
type delayed struct {
	alloc *messages.Allocation
	at    time.Time
}

// followups creates the evals that will reschedule delayed allocs, one per
// batch of reschedule times within followupBatchWindow. Each waits until
// the latest time in its batch, so every alloc in it is due when it runs.
func (p *planner) followups(later []delayed) {
	if len(later) == 0 {
		return
	}
	slices.SortStableFunc(later, func(a, b delayed) int { return a.at.Compare(b.at) })
	start := 0
	for i := 1; i <= len(later); i++ {
		if i < len(later) && later[i].at.Sub(later[start].at) < followupBatchWindow {
			continue
		}
		p.plan.NewEvals = append(p.plan.NewEvals, p.followupEval(later[start:i]))
		start = i
	}
}

// followupEval waits for the latest time of batch (sorted by time); its
// description names the allocations it reschedules and why the first
// failed, so that `eval status` says which volume or task broke.
func (p *planner) followupEval(batch []delayed) *messages.Evaluation {
	now, at := p.opts.Now.UnixNano(), batch[len(batch)-1].at
	return &messages.Evaluation{
		ID:                p.opts.NewID(),
		Namespace:         p.eval.Namespace,
		Priority:          p.eval.Priority,
		Type:              p.eval.Type,
		TriggeredBy:       triggerAllocFail,
		JobID:             p.eval.JobID,
		JobModifyIndex:    p.eval.JobModifyIndex,
		Status:            messages.EvalStatusPending,
		StatusDescription: delayedWhy(batch),
		PreviousEval:      p.eval.ID,
		WaitUntil:         at.UnixNano(),
		CreateTime:        now,
		ModifyTime:        now,
	}
}

// delayedWhy describes a followup eval: "created for delayed rescheduling
// of allocation X (failed: <its client description>)", and how many more.
func delayedWhy(batch []delayed) string {
	first := batch[0].alloc
	why := fmt.Sprintf("%s of allocation %s", delayedDescription, first.GetID())
	if d := first.GetClientDescription(); d != "" {
		why += " (failed: " + d + ")"
	}
	if len(batch) > 1 {
		why += fmt.Sprintf(" and %d more", len(batch)-1)
	}
	return why
}
