package alloc

import (
	"context"
	"maps"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// The template step of a task's start, as Nomad orders it: after the
// artifact step (a template's source may be a file an artifact fetched)
// and before the driver starts the task, the task's templates are
// rendered into its directory, in the start's worker. A template that
// reads a variable that does not exist yet waits for it, so the task does
// not start until it can. Every start renders again (a restart, whatever
// asked for it, runs with the files and env templates' variables of now);
// a template with once = true renders at the first start only, and its
// env lines stay. The task actor keeps its env templates' variables and
// tells the alloc actor what it rendered, which its watch starts from
// (template_watch.go).

// eventHookFailed is the event of a template that does not render,
// as Nomad names a prestart hook's failure.
const eventHookFailed = "Task hook failed"

// templateError is a start failure of the template step.
type templateError struct{ err error }

func (e *templateError) Error() string { return "prestart hook \"template\" failed: " + e.err.Error() }
func (e *templateError) Unwrap() error { return e.err }

// taskRendered is what a start's template step rendered: the variables
// table's index it rendered at, the sums of the outputs, the env
// templates' variables. The task actor sends it to the alloc actor.
type taskRendered struct {
	task  string
	index uint64
	sums  map[tmplKey][32]byte
	env   map[string]string
}

// envOf is the env templates' variables of a render (none for nil).
func (r *taskRendered) envOf() map[string]string {
	if r == nil {
		return nil
	}
	return r.env
}

// renderFunc renders a task's templates for one start (first: the first
// start of the task actor, which renders the once templates too).
// blocked tells the task actor that the render waits on a refused read.
type renderFunc func(ctx context.Context, first bool, blocked func(error)) (*taskRendered, error)

// renderStep is the template step of task t's starts; nil when the task
// has no template.
func (h *templateHook) renderStep(t *messages.Task) renderFunc {
	if len(t.GetTemplates()) == 0 {
		return nil
	}
	al := proto.Clone(h.a.alloc).(*messages.Allocation)
	t = proto.Clone(t).(*messages.Task)
	return func(ctx context.Context, first bool, blocked func(error)) (*taskRendered, error) {
		w := &templateHook{a: h.a, env: map[string]map[string]string{}, sums: map[tmplKey][32]byte{}, blocked: blocked}
		index, err := w.currentIndex(ctx, al)
		if err != nil {
			return nil, err
		}
		for i, tt := range t.GetTemplates() {
			if tt.GetOnce() && !first {
				continue
			}
			if err := w.renderFirst(ctx, al, t, i); err != nil {
				return nil, err
			}
		}
		return &taskRendered{task: t.GetName(), index: index, sums: w.sums, env: w.env[t.GetName()]}, nil
	}
}

// templateRun is the task actor's record of its template step.
type templateRun struct {
	rendered bool              // a start rendered the templates once
	env      map[string]string // the env templates' variables
}

// withTemplateEnv is cfg with the env templates' variables over the
// task's own: a copy, the actor's stays as it was.
func withTemplateEnv(cfg *driver.TaskConfig, kept, rendered map[string]string) *driver.TaskConfig {
	if len(kept) == 0 && len(rendered) == 0 {
		return cfg
	}
	c := *cfg
	c.Env = make(map[string]string, len(cfg.Env)+len(kept)+len(rendered))
	maps.Copy(c.Env, cfg.Env)
	maps.Copy(c.Env, kept)
	maps.Copy(c.Env, rendered)
	return &c
}

// templateBlocked: a start's render waits on a read refused to the
// task's workload identity (the task stays pending).
type templateBlocked struct{ err error }

// templateBlockedFunc is what a start's render calls when a read is
// refused: a message to this task actor, from the render's worker.
func (a *taskActor) templateBlockedFunc(ctx actor.Context) func(error) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	return func(err error) { root.Send(self, &templateBlocked{err: err}) }
}

// onTemplateBlocked records the event of a render that waits.
func (a *taskActor) onTemplateBlocked(ctx actor.Context, m *templateBlocked) {
	appendEvent(a.state, newEvent(eventHookMessage, "Template blocked: "+m.err.Error(), a.spec.Clock.Now()))
	a.report(ctx)
}

// onRendered keeps what a start's template step rendered and tells the
// alloc actor, whose watch follows the variables from there.
func (a *taskActor) onRendered(ctx actor.Context, r *taskRendered) {
	if r == nil {
		return
	}
	a.tmpl.rendered = true
	if len(r.env) > 0 {
		if a.tmpl.env == nil {
			a.tmpl.env = map[string]string{}
		}
		maps.Copy(a.tmpl.env, r.env)
	}
	if p := ctx.Parent(); p != nil {
		ctx.Send(p, r)
	}
}
