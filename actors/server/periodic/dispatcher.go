package periodic

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/messages"
)

// maxCatchUp bounds the cron times walked to find the latest one missed
// (a minute cron over a week without a leader is 10,080).
const maxCatchUp = 100_000

// Proposer commits a raft command through the leader.
type Proposer interface {
	Apply(ctx context.Context, cmd *messages.Command) (any, uint64, error)
}

// Spec is what the Dispatcher needs.
type Spec struct {
	State    func() View
	Proposer Proposer
	Clock    actors.Clock
	Logger   *slog.Logger
}

// JobsChanged tells the Dispatcher that jobs (state.JobKey) changed: it
// reads them again (a new periodic job, a changed cron, a stopped or
// purged one).
type JobsChanged struct{ Keys []string }

// tick is the launch timer, a message to self.
type tick struct{}

// launched is a launch's result, from its worker.
type launched struct {
	key    string
	launch time.Time
	err    error
}

// entry is one periodic job's next launch.
type entry struct {
	ns, id   string
	next     time.Time
	inflight bool
}

// Dispatcher launches periodic jobs' children on the leader; see the
// package doc. A new leader starts a new one, which reads its state from
// raft.
type Dispatcher struct {
	actors.Lifetime
	spec  *Spec
	log   *slog.Logger
	jobs  map[string]*entry
	timer actors.Timer
	armed time.Time
}

// New returns the Dispatcher's producer.
func New(sp *Spec) actor.Producer {
	return func() actor.Actor {
		return &Dispatcher{spec: sp, log: sp.Logger, jobs: map[string]*entry{}}
	}
}

// Receive dispatches.
func (d *Dispatcher) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		for _, j := range d.spec.State().PeriodicJobs() {
			d.reload(state.JobKey(j.GetNamespace(), j.GetID()), j)
		}
		d.launchDue(ctx)
	case *JobsChanged:
		view := d.spec.State()
		for _, k := range m.Keys {
			ns, id := state.SplitJobKey(k)
			d.reload(k, view.JobByID(ns, id))
		}
		d.launchDue(ctx)
	case *tick:
		d.armed = time.Time{}
		d.launchDue(ctx)
	case *launched:
		d.onLaunched(ctx, m)
	case *actor.Stopping:
		if d.timer != nil {
			d.timer.Stop()
		}
	case *actor.Stopped, *actor.Restarting, *actor.Terminated:
	default:
		d.log.Warn("periodic dispatcher: unexpected message", "type", fmt.Sprintf("%T", m))
	}
}

// reload recomputes key's next launch from the stored job j (nil: gone)
// and its last launch.
func (d *Dispatcher) reload(key string, j *messages.Job) {
	e := d.jobs[key]
	if j == nil || j.GetStop() || !j.GetPeriodic().GetEnabled() {
		if e != nil && !e.inflight {
			delete(d.jobs, key)
		}
		return
	}
	if e != nil && e.inflight {
		return // the launch's result reloads it
	}
	base := time.Unix(0, j.GetSubmitTime())
	if l := d.spec.State().PeriodicLaunch(j.GetNamespace(), j.GetID()); l != nil {
		base = time.Unix(0, l.GetLaunch())
	}
	next, err := jobspec.PeriodicNext(j.GetPeriodic(), base)
	if err != nil || next.IsZero() {
		if err != nil {
			d.log.Warn("periodic job: no next launch", "job", j.GetID(), "namespace", j.GetNamespace(), "error", err)
		}
		delete(d.jobs, key)
		return
	}
	d.jobs[key] = &entry{ns: j.GetNamespace(), id: j.GetID(), next: next}
}

// launchDue launches every job whose time has come, at the latest of its
// cron times not after now, and arms the timer for the soonest next one.
func (d *Dispatcher) launchDue(ctx actor.Context) {
	now := d.spec.Clock.Now()
	view := d.spec.State()
	var soonest time.Time
	for key, e := range d.jobs {
		if e.inflight {
			continue
		}
		if e.next.After(now) {
			if soonest.IsZero() || e.next.Before(soonest) {
				soonest = e.next
			}
			continue
		}
		j := view.JobByID(e.ns, e.id)
		if j == nil {
			delete(d.jobs, key)
			continue
		}
		at := latestDue(j.GetPeriodic(), e.next, now)
		if j.GetPeriodic().GetProhibitOverlap() && Running(view, e.ns, e.id) {
			d.log.Info("periodic job: launch skipped, a previous child is still running",
				"job", e.id, "namespace", e.ns, "launch", at)
			if next, err := jobspec.PeriodicNext(j.GetPeriodic(), at); err == nil && !next.IsZero() {
				e.next = next
				if soonest.IsZero() || next.Before(soonest) {
					soonest = next
				}
			}
			continue
		}
		e.inflight = true
		d.launch(ctx, key, j, at, now)
	}
	d.arm(ctx, soonest, now)
}

// latestDue is the latest cron time of p from next up to now.
func latestDue(p *messages.PeriodicConfig, next, now time.Time) time.Time {
	at := next
	for range maxCatchUp {
		n, err := jobspec.PeriodicNext(p, at)
		if err != nil || n.IsZero() || n.After(now) {
			break
		}
		at = n
	}
	return at
}

func (d *Dispatcher) launch(ctx actor.Context, key string, j *messages.Job, at, now time.Time) {
	cmd := LaunchCommand(j, at, now)
	prop := d.spec.Proposer
	actors.Go(ctx, func(c context.Context) any {
		_, _, err := prop.Apply(c, cmd)
		return &launched{key: key, launch: at, err: err}
	})
}

func (d *Dispatcher) onLaunched(ctx actor.Context, m *launched) {
	e := d.jobs[m.key]
	if e != nil {
		e.inflight = false
	}
	switch {
	case m.err == nil:
		d.log.Info("periodic job launched", "job", e.idOr(m.key), "launch", m.launch)
	case errors.Is(m.err, state.ErrLaunchNotLater):
		// Another leader launched it first: the stored launch says what
		// comes next.
	default:
		d.log.Warn("periodic job: launch failed", "job", e.idOr(m.key), "launch", m.launch, "error", m.err)
	}
	ns, id := state.SplitJobKey(m.key)
	view := d.spec.State()
	j := view.JobByID(ns, id)
	if m.err != nil && !errors.Is(m.err, state.ErrLaunchNotLater) && j != nil && j.GetPeriodic().GetEnabled() {
		// Not committed (no leader, a shutdown): try the same time again
		// on the next tick, not at once.
		if e != nil {
			e.next = m.launch
			d.arm(ctx, d.spec.Clock.Now().Add(time.Second), d.spec.Clock.Now())
		}
		return
	}
	d.reload(m.key, j)
	d.launchDue(ctx)
}

func (e *entry) idOr(key string) string {
	if e == nil {
		return key
	}
	return e.id
}

// arm sets the timer for at (zero: none needed), unless it is set for
// that time or earlier already.
func (d *Dispatcher) arm(ctx actor.Context, at, now time.Time) {
	if at.IsZero() || (!d.armed.IsZero() && !d.armed.After(at)) {
		return
	}
	if d.timer != nil {
		d.timer.Stop()
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	d.armed = at
	d.timer = d.spec.Clock.AfterFunc(max(at.Sub(now), 0), func() { root.Send(self, &tick{}) })
}
