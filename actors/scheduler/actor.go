package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/uuid"
	metrics "github.com/hashicorp/go-metrics"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/actors/server/evals"
	"github.com/troupe-dev/troupe/messages"
)

// StateView is what the scheduler actor reads: the planning snapshot plus
// evaluations.
type StateView interface {
	Snapshot
	EvalByID(id string) *messages.Evaluation
	EvalsByStatus(status string) []*messages.Evaluation
}

// Proposer commits a raft command through the leader.
type Proposer interface {
	Apply(ctx context.Context, cmd *messages.Command) (any, uint64, error)
}

// Spec is everything the scheduler actor needs.
type Spec struct {
	State    func() StateView
	Proposer Proposer
	Clock    actors.Clock
	Logger   *slog.Logger
	// Seed seeds node shuffling; tests fix it.
	Seed uint64
	// MaxPlacements bounds the allocations one plan places (0: none);
	// see Options.MaxPlacements.
	MaxPlacements int
	// PipelineDepth is how many plans may be on their way through raft at
	// once, each of another job (0: defaultPipelineDepth; 1: one at a
	// time). See pipeline.go.
	PipelineDepth int
	// Stats, when set, is kept up to date with the queue (metrics.go).
	Stats *Stats
}

// CapacityChanged tells the scheduler that room may have appeared (a node
// joined or became eligible, allocations ended): blocked evaluations are
// retried.
type CapacityChanged struct{}

// Worker results.
type planApplied struct {
	eval   *messages.Evaluation
	plan   *messages.ApplyPlan
	placed int
	// continuation is the ID of the plan's follow-up evaluation for what
	// MaxPlacements left out, "" when there is none.
	continuation string
	result       *messages.ApplyPlanResult
	err          error
}

// Actor is the scheduler actor ("scheduler" on the leader). It plans one
// evaluation at a time and commits each plan through raft; while a plan is
// on its way it may plan the evaluation of another job (pipeline.go);
// evaluations that arrive meanwhile wait in order.
type Actor struct {
	actors.Lifetime // ends the workers on stop
	spec            *Spec
	queue           []string
	queued          map[string]string // queued evaluation -> its job (evalJob)
	perJob          map[string]int    // job -> evaluations queued (metrics.go)
	flight          inFlight
	timers          map[string]waiting // waiting.go
	waitSeq         uint64
	retries         map[string]int
	// refused counts, per job ("namespace/id"), the plans refused in a row.
	refused map[string]int
	rand    *rand.Rand
	nodes   *NodeCache // what Process derives from nodes alone, kept across evaluations
	planned uint64
	// missed: changes that arrived while a plan was in flight (unblock.go).
	missed missedChanges
	// hold says until when a continuation of a refused plan waits (the
	// refusal backoff; the continuation, not a retry, plans the job again).
	hold map[string]time.Time
	// held: the scheduler configuration pauses planning (PauseEvalBroker).
	held bool
	log  *slog.Logger
}

// New returns a producer for the scheduler actor.
func New(spec *Spec) actor.Producer {
	return func() actor.Actor {
		return &Actor{spec: spec, queued: map[string]string{}, perJob: map[string]int{}, timers: map[string]waiting{}, retries: map[string]int{}, refused: map[string]int{},
			hold: map[string]time.Time{}, nodes: newNodeCache(), rand: rand.New(rand.NewPCG(spec.Seed, spec.Seed^0x9e3779b97f4a7c15)), log: spec.Logger}
	}
}

// Phase names the actor's state for the actor tree.
func (a *Actor) Phase() string {
	if a.flight.busy() {
		return fmt.Sprintf("planning (%d in flight, %d queued)", len(a.flight.jobs), len(a.queue))
	}
	if a.held {
		return fmt.Sprintf("paused by the scheduler configuration (%d queued)", len(a.queue))
	}
	return "idle"
}

// Receive dispatches.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.onStarted(ctx)
	case *messages.EvalReady:
		a.enqueue(ctx, m.GetEvalID())
	case *waitOver:
		a.onWaitOver(ctx, m)
	case *EvalsEnded:
		a.onEvalsEnded(m)
	case *planApplied:
		a.onPlanApplied(ctx, m)
	case *CapacityChanged:
		a.onCapacityChanged(ctx)
	case *CSIChanged:
		a.onCSIChanged(ctx, m)
	case *ConfigChanged:
		a.next(ctx)
	case *actor.Stopping:
		a.stopWaits()
		a.spec.Stats.store(BrokerStats{})
		return
	case *actor.Stopped, *actor.Restarting, *actor.Terminated:
		return
	default:
		a.log.Warn("scheduler: unexpected message", "type", fmt.Sprintf("%T", m))
	}
	a.spec.Stats.store(a.brokerStats())
}

// onStarted picks up every evaluation left pending: after a leader change
// or an agent restart the new scheduler carries on where the old one was.
func (a *Actor) onStarted(ctx actor.Context) {
	for _, e := range a.spec.State().EvalsByStatus(messages.EvalStatusPending) {
		a.enqueue(ctx, e.GetID())
	}
}

func (a *Actor) enqueue(ctx actor.Context, id string) {
	if _, ok := a.queued[id]; ok {
		return
	}
	a.queueAdd(id, evalJob(a.spec.State().EvalByID(id)))
	a.queue = append(a.queue, id)
	a.next(ctx)
}

// next starts planning queued evaluations, oldest first, while the
// pipeline has room (pipeline.go: never two of one job at once).
func (a *Actor) next(ctx actor.Context) {
	if len(a.queue) > 0 && a.paused() {
		return
	}
	for a.flight.room(a.spec.PipelineDepth) && len(a.queue) > 0 {
		i := a.pick()
		if i < 0 {
			return
		}
		id := a.queue[i]
		a.queue = slices.Delete(a.queue, i, i+1)
		a.queueDrop(id)
		a.plan(ctx, id)
	}
}

func (a *Actor) plan(ctx actor.Context, id string) {
	view := a.spec.State()
	eval := view.EvalByID(id)
	if eval == nil || eval.GetStatus() != messages.EvalStatusPending {
		return
	}
	now := a.spec.Clock.Now()
	if wait := time.Unix(0, eval.GetWaitUntil()).Sub(now); eval.GetWaitUntil() > 0 && wait > 0 {
		a.delay(ctx, id, wait)
		return
	}
	if until, held := a.hold[id]; held && now.Before(until) {
		a.delay(ctx, id, until.Sub(now))
		return
	}
	delete(a.hold, id)
	start := time.Now() // wall time for the metric; planning itself reads a.spec.Clock
	plan, deploy, err := processDeploy(view, eval, Options{Now: now, NewID: newID, Rand: a.rand, MaxPlacements: a.spec.MaxPlacements, NodeCache: a.nodes,
		Pending: a.flight.pending}) // Process reads the stored configuration's algorithm itself
	measureInvoke(eval.GetType(), start)
	if err != nil {
		// A bad evaluation (unknown job type, ...) fails for good, visibly.
		a.log.Error("scheduling failed", "eval", id, "error", err)
		failed := cloneEval(eval)
		failed.Status, failed.StatusDescription, failed.ModifyTime = messages.EvalStatusFailed, err.Error(), now.UnixNano()
		a.propose(ctx, &messages.UpsertEvals{Evals: []*messages.Evaluation{failed}})
		return
	}
	if a.flight.busy() && planFailed(plan) {
		a.replanAlone(id, evalJob(eval))
		return
	}
	a.flight.start(eval, plan)
	prop := a.spec.Proposer
	// The log gets the compact form; plan itself stays whole for the
	// in-flight bookkeeping.
	cmd := &messages.Command{Time: now.UnixNano(), Cmd: &messages.Command_ApplyPlan{ApplyPlan: messages.CompactPlan(plan)}}
	placed := len(plan.GetPlace())
	cont := continuationOf(plan)
	actors.Go(ctx, func(life context.Context) any {
		c, cancel := context.WithTimeout(life, time.Minute)
		defer cancel()
		if deploy != nil {
			dcmd := &messages.Command{Time: cmd.Time, Cmd: &messages.Command_UpsertDeployment{
				UpsertDeployment: &messages.UpsertDeployment{Deployment: deploy}}}
			if _, _, err := prop.Apply(c, dcmd); err != nil {
				return &planApplied{eval: eval, plan: plan, placed: placed, continuation: cont, err: err}
			}
		}
		submit := time.Now()
		resp, _, err := prop.Apply(c, cmd)
		metrics.MeasureSince(keySubmit, submit)
		res, _ := resp.(*messages.ApplyPlanResult)
		return &planApplied{eval: eval, plan: plan, placed: placed, continuation: cont, result: res, err: err}
	})
}

func (a *Actor) onPlanApplied(ctx actor.Context, m *planApplied) {
	a.flight.done(m.eval, m.plan)
	a.unwait(m.eval.GetID())
	switch {
	case m.err != nil:
		// Try again later: the evaluation stays pending until a plan lands.
		a.retries[m.eval.GetID()]++
		wait, _ := commitRetry.Delay(a.retries[m.eval.GetID()], 0)
		a.log.Error("committing plan failed, retrying", "eval", m.eval.GetID(), "error", m.err, "in", wait)
		a.delay(ctx, m.eval.GetID(), wait)
	case len(m.result.GetRefused()) > 0:
		key := m.eval.GetNamespace() + "/" + m.eval.GetJobID()
		a.refused[key]++
		wait := refusedBackoff(a.refused[key])
		a.log.Info("plan partly refused, re-evaluating", "eval", m.eval.GetID(), "refused", len(m.result.GetRefused()), "in", wait)
		if m.continuation == "" {
			a.retry(ctx, m.eval, wait)
		} else if wait > 0 {
			// The committed continuation plans the job again: one chain of
			// evaluations, with the refusal's backoff.
			a.hold[m.continuation] = a.spec.Clock.Now().Add(wait)
		}
	default:
		a.planned += uint64(m.placed)
		delete(a.retries, m.eval.GetID())
		delete(a.refused, m.eval.GetNamespace()+"/"+m.eval.GetJobID())
	}
	if !a.flight.busy() {
		a.replayMissed(ctx)
	}
	a.next(ctx)
}

// continuationOf is the ID of plan's continuation evaluation, if any.
func continuationOf(plan *messages.ApplyPlan) string {
	for _, e := range plan.GetNewEvals() {
		if e.GetTriggeredBy() == triggerQueued && e.GetStatus() == messages.EvalStatusPending {
			return e.GetID()
		}
	}
	return ""
}

// refusedBackoff is how long the n-th plan of a job refused in a row
// waits before it is planned again: at once the first time (the state
// moved on; a fresh plan usually fits), then 1 s doubling to 30 s, so a
// refusal that persists never turns into a hot loop of evaluations.
func refusedBackoff(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	d, _ := refusedRetry.Delay(n-1, 0)
	return d
}

// The scheduler's retries: a failed plan commit waits 1 s more each time,
// up to 30 s, for as long as it fails (the evaluation stays pending); a
// refused plan's wait is refusedBackoff.
var (
	commitRetry  = actors.Retry{Initial: time.Second, Step: time.Second, Max: 30 * time.Second}
	refusedRetry = actors.Retry{Initial: time.Second, Multiplier: 2, Max: 30 * time.Second}
)

// retry queues a fresh evaluation of the same job after a refused plan,
// to be planned after wait.
func (a *Actor) retry(ctx actor.Context, prev *messages.Evaluation, wait time.Duration) {
	ev := evals.ForPlanRefused(prev, wait, a.spec.Clock.Now())
	a.propose(ctx, &messages.UpsertEvals{Evals: []*messages.Evaluation{ev}})
}

func (a *Actor) propose(ctx actor.Context, up *messages.UpsertEvals) {
	prop := a.spec.Proposer
	cmd := &messages.Command{Time: a.spec.Clock.Now().UnixNano(), Cmd: &messages.Command_UpsertEvals{UpsertEvals: up}}
	log := a.log
	actors.Go(ctx, func(life context.Context) any {
		c, cancel := context.WithTimeout(life, time.Minute)
		defer cancel()
		defer metrics.MeasureSince(keyUpdateEval, time.Now())
		if _, _, err := prop.Apply(c, cmd); err != nil {
			log.Error("updating evaluations failed", "error", err)
		}
		return nil
	})
}

func cloneEval(e *messages.Evaluation) *messages.Evaluation {
	return proto.Clone(e).(*messages.Evaluation)
}

// newID is a random (version 4) UUID for a placement or an evaluation.
// google/uuid formats it in one allocation; go-uuid's GenerateUUID
// used fmt.Sprintf, a seventh of a placement's garbage and ~1 s of CPU
// in a million-placement run.
func newID() string { return uuid.NewString() }
