package alloc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
)

// volumeSpec is everything a volume actor needs.
type volumeSpec struct {
	AllocID string
	NodeID  string
	// Name is the group's name for the volume; its record is in DB.
	Name   string
	CSI    *CSIConfig
	DB     *clientstate.DB
	Clock  actors.Clock
	Logger *slog.Logger
}

// Volume actor phases.
const (
	volumeLoading      = "loading"
	volumeUnpublishing = "unpublishing"
	volumeWaiting      = "waiting to retry"
	volumeDone         = "done"
)

// Messages between a volume actor, its workers and its parent.
type (
	volumeLoaded struct {
		rec *clientstate.VolumeMount
		err error // the state file could not be read
	}
	retryLoad      struct{}
	teardownResult struct {
		rec *clientstate.VolumeMount
		err error
	}
	retryTeardown struct{}
	volumeStored  struct{}
	// volumeChanged tells the alloc actor a volume's state; done: the
	// volume actor has finished (unpublished, or failed for good).
	volumeChanged struct {
		name  string
		state *messages.AllocVolumeState
		done  bool
	}
)

// volumeActor (client/allocs/<id>/volumes/<name>) unmounts one csi volume
// of a stopped allocation and reports it detached, retrying failures with
// backoff on the injected clock until the retry deadline, so one stuck
// volume never holds up the others.
type volumeActor struct {
	actors.Lifetime // ends the workers on stop
	spec            *volumeSpec
	td              *teardown
	rec             *clientstate.VolumeMount
	failures        int
	phase           string
	timer           actors.Timer
	log             *slog.Logger
}

// newVolumeActor returns a producer for a volume actor.
func newVolumeActor(spec *volumeSpec) actor.Producer {
	return func() actor.Actor {
		return &volumeActor{spec: spec, phase: volumeLoading,
			td:  &teardown{cfg: spec.CSI, db: spec.DB, allocID: spec.AllocID, nodeID: spec.NodeID, clock: spec.Clock},
			log: spec.Logger.With("alloc", spec.AllocID, "volume", spec.Name)}
	}
}

// Phase names the actor's state for the actor tree.
func (a *volumeActor) Phase() string { return a.phase }

// Receive dispatches.
func (a *volumeActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.onStarted(ctx)
	case *actor.Stopping, *actor.Restarting:
		a.onStopping()
	case *volumeLoaded:
		a.onLoaded(ctx, m)
	case *retryLoad:
		a.load(ctx)
	case *teardownResult:
		a.onResult(ctx, m)
	case *retryTeardown:
		a.attempt(ctx)
	case *volumeStored:
		a.finish(ctx)
	case *actor.Stopped, *actor.Terminated:
	default:
		a.log.Warn("volume actor: unexpected message", "type", fmt.Sprintf("%T", m))
	}
}

// onStarted reads the volume's record: the state file, not the spawn
// spec, is the truth after a crash or an agent restart.
func (a *volumeActor) onStarted(ctx actor.Context) {
	a.td.usage = &usageClient{root: ctx.ActorSystem().Root, pid: a.spec.CSI.Usage, timeout: a.spec.CSI.CallTimeout}
	a.load(ctx)
}

// load reads the volume's record (again, after the state file could not
// be read).
func (a *volumeActor) load(ctx actor.Context) {
	a.timer = nil
	db, alloc, name := a.spec.DB, a.spec.AllocID, a.spec.Name
	actors.Go(ctx, func(_ context.Context) any {
		recs, err := db.VolumeMounts(alloc)
		if err != nil {
			return &volumeLoaded{err: err}
		}
		return &volumeLoaded{rec: recs[name]}
	})
}

func (a *volumeActor) onStopping() {
	if a.timer != nil {
		a.timer.Stop()
	}
}

func (a *volumeActor) onLoaded(ctx actor.Context, m *volumeLoaded) {
	if m.err != nil {
		// Not knowing what is mounted is no reason to stop: read again
		// with the unpublish backoff's first interval.
		a.log.Error("reading the volume's record failed, retrying", "error", m.err)
		self, root := ctx.Self(), ctx.ActorSystem().Root
		a.timer = a.spec.Clock.AfterFunc(a.spec.CSI.Retry.Initial, func() { root.Send(self, &retryLoad{}) })
		return
	}
	if m.rec == nil || !volumeActive(m.rec.State.GetState()) {
		a.rec = m.rec
		a.finish(ctx)
		return
	}
	a.rec = m.rec
	a.failures = int(a.rec.State.GetAttempts())
	a.attempt(ctx)
}

func (a *volumeActor) attempt(ctx actor.Context) {
	a.timer = nil
	a.phase = volumeUnpublishing
	a.rec.State.State = VolumeUnpublishing
	a.report(ctx, false)
	td, rec := a.td, a.rec.Clone()
	actors.Go(ctx, func(c context.Context) any {
		err := td.attempt(c, rec)
		if c.Err() != nil {
			return nil // stopping: a restarted actor starts over from the record
		}
		return &teardownResult{rec: rec, err: err}
	})
}

func (a *volumeActor) onResult(ctx actor.Context, m *teardownResult) {
	a.rec = m.rec
	if m.err == nil {
		a.log.Info("volume unpublished and reported detached")
		a.finish(ctx)
		return
	}
	var elapsed time.Duration
	if a.rec.RetryStart != 0 {
		elapsed = a.spec.Clock.Now().Sub(time.Unix(0, a.rec.RetryStart))
	}
	// Waiting for the plugin to show up (its probe after an agent restart,
	// or its task restarting) is no failure of the plugin: look again
	// after the first interval, without growing the backoff.
	attempt := 1
	if !errors.Is(m.err, errNoNodePlugin) {
		a.failures++
		attempt = a.failures
	}
	delay, ok := a.spec.CSI.Retry.Delay(attempt, elapsed)
	if !ok {
		a.giveUp(ctx, m.err)
		return
	}
	a.log.Warn("volume teardown failed, retrying", "error", m.err, "attempt", a.failures, "in", delay)
	a.phase = volumeWaiting
	a.report(ctx, false)
	self, root := ctx.Self(), ctx.ActorSystem().Root
	a.timer = a.spec.Clock.AfterFunc(delay, func() { root.Send(self, &retryTeardown{}) })
}

// giveUp marks the volume failed past the retry deadline: the allocation
// goes on, and the server's rules for abandoned node plugins take over.
func (a *volumeActor) giveUp(ctx actor.Context, err error) {
	what := "unmount it from this node"
	if errors.Is(err, errDetach) {
		what = "report it detached"
	}
	msg := fmt.Sprintf("gave up after %d failed attempts in %s trying to %s: %v",
		a.failures, a.spec.CSI.Retry.Deadline, what, err)
	a.log.Error("volume teardown abandoned", "error", err, "attempts", a.failures)
	a.rec.State.State = volumeFailed
	addVolumeEvent(a.rec.State, eventVolumeGaveUp, msg, a.spec.Clock.Now())
	db, alloc, rec := a.spec.DB, a.spec.AllocID, a.rec.Clone()
	log := a.log
	actors.Go(ctx, func(_ context.Context) any {
		if err := db.PutVolumeMount(alloc, rec); err != nil {
			// Still done: the allocation must not wait on a state write.
			log.Error("recording the abandoned volume failed", "error", err)
		}
		return &volumeStored{}
	})
}

func (a *volumeActor) finish(ctx actor.Context) {
	a.phase = volumeDone
	a.report(ctx, true)
}

// report sends the volume's state to the alloc actor.
func (a *volumeActor) report(ctx actor.Context, done bool) {
	var st *messages.AllocVolumeState
	if a.rec != nil && a.rec.State != nil {
		st = proto.Clone(a.rec.State).(*messages.AllocVolumeState)
	}
	ctx.Send(ctx.Parent(), &volumeChanged{name: a.spec.Name, state: st, done: done})
}
