package alloc

import (
	"context"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
)

// Hook is one step of an allocation's setup and teardown. The alloc actor
// keeps one ordered list of hooks (hookList); its Lifecycle runs their
// prerun in order before the tasks start and their postrun in reverse
// after every task is dead. A hook implements only the phases it needs:
//
//   - prerunHook, postrunHook, updateHook: a blocking call, in a worker
//     of the alloc actor, with a copy of the allocation and the actor's
//     lifetime context; an error reads "<name>: <error>".
//   - restoreHook: on the actor, once the state file was read.
//   - holder: says the hook may hold something on the host (a network, a
//     volume), so that a failed setup is torn down.
//   - actorHook: its phases run on the actor (they keep results, report
//     progress, spawn children) and it says how they are retried.
//
// A new hook is a new file with a type that implements some of these,
// and a line in hookList.
type Hook interface {
	Name() string
}

// prerunHook prepares the allocation before its tasks start.
type prerunHook interface {
	Prerun(ctx context.Context, a *messages.Allocation) error
}

// postrunHook releases what Prerun took, once every task is dead. It runs
// also after a failed setup that holds something, so it must cope with a
// Prerun that never ran.
type postrunHook interface {
	Postrun(ctx context.Context, a *messages.Allocation) error
}

// updateHook learns of every update of the allocation while its tasks
// run (the one that stops them too); its error is logged.
type updateHook interface {
	Update(ctx context.Context, a *messages.Allocation) error
}

// restoreHook takes its state from what the state file holds for the
// allocation (after an agent restart or an actor crash). It runs on the
// actor and must not block.
type restoreHook interface {
	Restore(stored *clientstate.StoredAlloc)
}

// holder is a hook that may still hold something on the host.
type holder interface {
	holding() bool
}

// actorHook is a hook whose phases run on the alloc actor. start begins
// phase p and returns false when there is nothing to do (the phase is
// done); else the hook ends it later with Actor.hookFinished. It must not
// block: blocking calls go to a worker (actors.Go) and come back as its
// own messages. plan says which phases it has and how they retry.
type actorHook interface {
	Hook
	plan() hookPlan
	start(ctx actor.Context, p hookPhase) bool
}

// hookList is the allocation's hooks in setup order: the network first
// (tasks and plugins join it), then the alloc dir, the workload identities, a dispatch's payload, the devices check,
// Spec.Hooks, the templates (on restore only: those of the tasks that run
// on; the others render at their start), and the csi volumes last (they
// bind into the task dirs).
func (a *Actor) hookList() []Hook {
	hooks := []Hook{a.network, &AllocDirHook{Root: a.spec.AllocRoot}, a.idents, &dispatchPayloadHook{root: a.spec.AllocRoot},
		&deviceHook{plugin: a.spec.Devices}}
	hooks = append(hooks, a.spec.Hooks...)
	return append(hooks, a.templates, a.csi)
}

// planOf is what the lifecycle needs to know of a hook.
func planOf(h Hook) hookPlan {
	if ah, ok := h.(actorHook); ok {
		return ah.plan()
	}
	_, pre := h.(prerunHook)
	_, post := h.(postrunHook)
	p := hookPlan{Name: h.Name(), Prerun: pre, Postrun: post}
	if r, ok := h.(prerunRetrier); ok {
		p.PrerunRetry = r.prerunRetry()
	}
	return p
}

// prerunRetrier is a blocking hook whose failed prerun is tried again.
type prerunRetrier interface {
	prerunRetry() *hookRetry
}

// hookDone is the end of a blocking hook phase.
type hookDone struct {
	step hookStep
	err  error
}

// startHook begins a hook phase: an actor hook's on the actor, a blocking
// one in a worker. false: there was nothing to do.
func (a *Actor) startHook(ctx actor.Context, s hookStep) bool {
	h := a.hooks[s.Hook]
	if ah, ok := h.(actorHook); ok {
		return ah.start(ctx, s.Phase)
	}
	var run func(context.Context, *messages.Allocation) error
	if p, ok := h.(prerunHook); ok && s.Phase == hookPrerun {
		run = p.Prerun
	}
	if p, ok := h.(postrunHook); ok && s.Phase == hookPostrun {
		run = p.Postrun
	}
	if run == nil {
		return false
	}
	al, name := proto.Clone(a.alloc).(*messages.Allocation), h.Name()
	actors.Go(ctx, func(c context.Context) any {
		err := run(c, al)
		if c.Err() != nil {
			return nil // stopping: a restarted actor runs the phase again
		}
		if err != nil {
			err = fmt.Errorf("%s: %w", name, err)
		}
		return &hookDone{step: s, err: err}
	})
	return true
}

func (a *Actor) onHookDone(ctx actor.Context, m *hookDone) {
	if a.current(a.hooks[m.step.Hook], m.step.Phase) {
		a.hookFinished(ctx, m.step.Phase, m.err)
	}
}

// current reports whether phase p of hook h is the one that runs.
func (a *Actor) current(h Hook, p hookPhase) bool {
	i := a.life.Hook()
	if i < 0 || a.hooks[i] != h || a.life.Phase() == phasePrerunWait || a.life.Phase() == phasePostrunWait {
		return false
	}
	switch p {
	case hookPrerun:
		return a.life.Phase() == phasePrerun
	case hookPostrun:
		return a.life.Phase() == phasePostrun && !a.life.Abandoning()
	default:
		return a.life.Abandoning()
	}
}

// hookFinished steps the lifecycle with the end of the current hook
// phase, and logs a failure with what comes of it.
func (a *Actor) hookFinished(ctx actor.Context, p hookPhase, err error) {
	name := a.hooks[a.life.Hook()].Name()
	eff := a.step(ctx, HookDone{Phase: p, Err: err, Holding: a.holding(), At: a.spec.Clock.Now()})
	switch {
	case err == nil:
	case eff.RetryIn > 0:
		a.log.Warn("hook failed, retrying", "hook", name, "phase", p, "error", err, "attempt", a.life.Tries(), "in", eff.RetryIn)
	case a.life.Abandoning():
		a.log.Error("hook failed, giving up", "hook", name, "phase", p, "error", err, "attempts", a.life.Tries())
	default:
		a.log.Error("hook failed", "hook", name, "phase", p, "error", err)
	}
}

// holding reports whether a hook may still hold something to let go.
func (a *Actor) holding() bool {
	for _, h := range a.hooks {
		if hh, ok := h.(holder); ok && hh.holding() {
			return true
		}
	}
	return false
}

// runUpdateHooks runs every update hook, in order, in one worker.
func (a *Actor) runUpdateHooks(ctx actor.Context) {
	var hooks []Hook
	for _, h := range a.hooks {
		if _, ok := h.(updateHook); ok {
			hooks = append(hooks, h)
		}
	}
	if len(hooks) == 0 {
		return
	}
	al, log := proto.Clone(a.alloc).(*messages.Allocation), a.log
	actors.Go(ctx, func(c context.Context) any {
		for _, h := range hooks {
			if err := h.(updateHook).Update(c, al); err != nil {
				log.Error("hook failed", "hook", h.Name(), "phase", "update", "error", err)
			}
		}
		return nil
	})
}

// groupOf finds the allocation's task group in its job.
func groupOf(a *messages.Allocation) *messages.TaskGroup {
	for _, g := range a.GetJob().GetTaskGroups() {
		if g.GetName() == a.GetTaskGroup() {
			return g
		}
	}
	return nil
}
