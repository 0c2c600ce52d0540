package deployment

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// retryAfter is how long the actor waits to step again after a command
// that did not commit (no leader, a refusal).
const retryAfter = time.Second

// View is the replicated state as the actor reads it (*state.Snap).
type View interface {
	DeploymentByID(id string) *messages.Deployment
	JobVersion(ns, id string, v uint64) *messages.Job
	LatestStableVersion(ns, id string, before uint64) *messages.Job
	AllocByID(id string) *messages.Allocation
}

// Proposer commits a raft command through the leader.
type Proposer interface {
	Apply(ctx context.Context, cmd *messages.Command) (any, uint64, error)
}

// Spec is what one deployment's Actor needs.
type Spec struct {
	ID       string
	State    func() View
	Proposer Proposer
	Clock    actors.Clock
	Logger   *slog.Logger
}

// Changed tells the actor its deployment changed in raft.
type Changed struct{}

// tick is the progress-deadline (or retry) timer, a message to self.
type tick struct{}

// applied is a proposed command's result, from its worker.
type applied struct{ err error }

// Actor watches one deployment; see the package doc.
type Actor struct {
	actors.Lifetime
	spec     *Spec
	log      *slog.Logger
	prev     map[string]int32
	next     map[string]int32
	inflight bool
	again    bool
	timer    actors.Timer
}

// New returns the Actor's producer.
func New(sp *Spec) actor.Producer {
	return func() actor.Actor { return &Actor{spec: sp, log: sp.Logger.With("deployment", sp.ID)} }
}

// Phase names the actor's state for the actor tree.
func (a *Actor) Phase() string {
	if d := a.spec.State().DeploymentByID(a.spec.ID); d != nil {
		return d.Status
	}
	return "gone"
}

// Receive dispatches.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started, *Changed, *tick:
		a.step(ctx)
	case *applied:
		a.onApplied(ctx, m)
	case *actor.Stopping:
		a.stopTimer()
	case *actor.Stopped, *actor.Restarting, *actor.Terminated:
	default:
		a.log.Warn("deployment actor: unexpected message", "type", fmt.Sprintf("%T", m))
	}
}

func (a *Actor) stopTimer() {
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
}

// step reads the deployment, asks Step and carries out its effects.
func (a *Actor) step(ctx actor.Context) {
	if a.inflight {
		a.again = true
		return
	}
	view := a.spec.State()
	d := view.DeploymentByID(a.spec.ID)
	if d == nil || !d.Active() {
		ctx.Stop(ctx.Self())
		return
	}
	now := a.spec.Clock.Now()
	in := Input{Deployment: d, Now: now, PreviousHealth: a.prev, HealthyCanary: map[string]int{},
		Job:    view.JobVersion(d.Namespace, d.JobID, d.JobVersion),
		Stable: view.LatestStableVersion(d.Namespace, d.JobID, d.JobVersion)}
	a.next = map[string]int32{}
	for name, s := range d.TaskGroups {
		a.next[name] = s.HealthyAllocs
		for _, id := range s.PlacedCanaries {
			if view.AllocByID(id).GetDeploymentStatus().IsHealthy() {
				in.HealthyCanary[name]++
			}
		}
	}
	eff := Step(in)
	a.stopTimer()
	if !eff.WakeAt.IsZero() {
		a.arm(ctx, eff.WakeAt.Sub(now))
	}
	if cmd := a.command(d, in.Job, eff, now); cmd != nil {
		a.propose(ctx, cmd)
		return
	}
	a.prev = a.next
}

// command is the raft command for eff (Command), or nil, logged.
func (a *Actor) command(d *messages.Deployment, job *messages.Job, eff Effects, now time.Time) *messages.Command {
	switch {
	case eff.Status != "":
		a.log.Info("deployment status", "status", eff.Status, "description", eff.Description)
	case eff.Promote:
		a.log.Info("deployment: auto-promoting canaries")
	}
	return Command(d, job, eff, now)
}

func (a *Actor) propose(ctx actor.Context, cmd *messages.Command) {
	a.inflight = true
	prop := a.spec.Proposer
	actors.Go(ctx, func(c context.Context) any {
		_, _, err := prop.Apply(c, cmd)
		return &applied{err: err}
	})
}

func (a *Actor) onApplied(ctx actor.Context, m *applied) {
	a.inflight = false
	if m.err != nil {
		a.log.Warn("deployment: command not committed; trying again", "error", m.err)
		a.stopTimer() // prev stays: the next step asks again
		a.arm(ctx, retryAfter)
		return
	}
	a.prev = a.next
	if a.again {
		a.again = false
		a.step(ctx)
	}
}

func (a *Actor) arm(ctx actor.Context, d time.Duration) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	a.timer = a.spec.Clock.AfterFunc(max(d, 0), func() { root.Send(self, &tick{}) })
}
