package alloc

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// Deployment health. An allocation placed by a deployment (DeploymentID
// set, its group with an update block) reports once whether it is healthy,
// in its status reports (Allocation.DeploymentStatus), as Nomad's client
// does:
//
//   - health_check = "task_states": healthy once every task has run for
//     min_healthy_time without a stop, before healthy_deadline (counted
//     from the tracker's start); unhealthy when a task fails or the
//     deadline passes first;
//   - "checks": as task_states, and every service check must pass too
//     (ChecksPassing; an allocation without checks counts as passing);
//   - "manual": never decided here (the operator sets it through the API).

// healthTick is the health timer, a message to self.
type healthTick struct{ seq int }

// healthTracker decides an allocation's deployment health; pure: the
// clock is passed in.
type healthTracker struct {
	strategy     *messages.UpdateStrategy
	start        time.Time
	runningSince time.Time // zero: not every task runs
	checksOK     bool
	decided      *bool
	at           time.Time
}

func newHealthTracker(u *messages.UpdateStrategy, now time.Time) *healthTracker {
	return &healthTracker{strategy: u, start: now, checksOK: true}
}

// observe takes the tasks' states and answers when to look again (zero:
// never, decided or manual).
func (h *healthTracker) observe(now time.Time, tasks []string, states map[string]*messages.TaskState) time.Time {
	if h.decided != nil || h.strategy.GetHealthCheck() == messages.HealthCheckManual {
		return time.Time{}
	}
	allRunning := len(tasks) > 0
	for _, t := range tasks {
		st := states[t]
		if st.GetFailed() || (st.GetState() == taskDead && st.GetFailed()) {
			return h.decide(false, now)
		}
		allRunning = allRunning && st.GetState() == taskRunning
	}
	deadline := h.start.Add(time.Duration(h.strategy.GetHealthyDeadline()))
	if h.strategy.GetHealthyDeadline() > 0 && !now.Before(deadline) {
		return h.decide(false, now)
	}
	checks := h.strategy.GetHealthCheck() != messages.HealthCheckChecks || h.checksOK
	if !allRunning || !checks {
		h.runningSince = time.Time{}
		return deadline
	}
	if h.runningSince.IsZero() {
		h.runningSince = now
	}
	healthyAt := h.runningSince.Add(time.Duration(h.strategy.GetMinHealthyTime()))
	if !now.Before(healthyAt) {
		return h.decide(true, now)
	}
	if h.strategy.GetHealthyDeadline() > 0 && deadline.Before(healthyAt) {
		return deadline
	}
	return healthyAt
}

func (h *healthTracker) decide(healthy bool, now time.Time) time.Time {
	h.decided, h.at = &healthy, now
	return time.Time{}
}

// status is the DeploymentStatus to report (nil: nothing decided).
func (h *healthTracker) status(canary bool) *messages.AllocDeploymentStatus {
	if h == nil || h.decided == nil {
		return nil
	}
	v := *h.decided
	return &messages.AllocDeploymentStatus{Healthy: &v, Timestamp: h.at.UnixNano(), Canary: canary}
}

// healthWatch is the actor's side: the tracker and its timer.
type healthWatch struct {
	tracker *healthTracker
	timer   actors.Timer
	seq     int
}

// trackHealth starts tracking when the allocation belongs to a deployment
// and its health is not known yet.
func (a *Actor) trackHealth() {
	u := groupOf(a.alloc).GetUpdate()
	if a.alloc.GetDeploymentID() == "" || !u.Rolling() || a.alloc.GetDeploymentStatus().HealthSet() {
		return
	}
	a.health.tracker = newHealthTracker(u, a.spec.Clock.Now())
	a.health.tracker.checksOK = !hasChecks(groupOf(a.alloc))
}

// hasChecks reports whether the group's services (its own or its tasks')
// have checks: their results then decide "checks" health.
func hasChecks(g *messages.TaskGroup) bool {
	for _, s := range g.GetServices() {
		if len(s.GetChecks()) > 0 {
			return true
		}
	}
	for _, t := range g.GetTasks() {
		for _, s := range t.GetServices() {
			if len(s.GetChecks()) > 0 {
				return true
			}
		}
	}
	return false
}

// checkHealth looks at the tasks again and reports a decision.
func (a *Actor) checkHealth(ctx actor.Context) {
	h := a.health.tracker
	if h == nil || h.decided != nil || a.alloc == nil {
		return
	}
	now := a.spec.Clock.Now()
	next := h.observe(now, a.tasks, a.states)
	if h.decided != nil {
		a.stopHealthTimer()
		a.log.Info("allocation health decided", "healthy", *h.decided)
		a.report(ctx)
		return
	}
	if next.IsZero() {
		return
	}
	a.stopHealthTimer()
	a.health.seq++
	seq, self, root := a.health.seq, ctx.Self(), ctx.ActorSystem().Root
	a.health.timer = a.spec.Clock.AfterFunc(max(next.Sub(now), 0), func() { root.Send(self, &healthTick{seq: seq}) })
}

func (a *Actor) onHealthTick(ctx actor.Context, m *healthTick) {
	if m.seq == a.health.seq {
		a.checkHealth(ctx)
	}
}

func (a *Actor) onChecksHealth(ctx actor.Context, passing bool) {
	if h := a.health.tracker; h != nil {
		h.checksOK = passing
		a.checkHealth(ctx)
	}
}

func (a *Actor) stopHealthTimer() {
	if a.health.timer != nil {
		a.health.timer.Stop()
		a.health.timer = nil
	}
}

// deploymentStatus is what the reports carry.
func (a *Actor) deploymentStatus() *messages.AllocDeploymentStatus {
	return a.health.tracker.status(a.alloc.GetDeploymentStatus().IsCanary())
}
