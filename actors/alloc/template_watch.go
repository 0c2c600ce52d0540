package alloc

import (
	"context"
	"crypto/sha256"
	"maps"
	"math/rand/v2"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// Template change modes, as Nomad names them.
const (
	changeRestart = "restart"
	changeSignal  = "signal"
	changeNoop    = "noop"
)

// templateRetry is the wait after a failed read or render before the
// watch tries again.
const templateRetry = 5 * time.Second

// Messages of the template watch.
type (
	// templatesChanged: the watch rendered again at index and these
	// templates' output changed (their files are written).
	templatesChanged struct {
		gen     int
		index   uint64
		sums    map[tmplKey][32]byte
		env     map[string]map[string]string
		changed []tmplKey
	}
	// templateApply: a change's splay is over; apply its change mode.
	templateApply struct {
		gen     int
		changed []tmplKey
	}
)

// watchTemplates starts the watch of the variables table once the tasks
// run; a no-op without templates to watch, or when one watch runs.
func (h *templateHook) watchTemplates(ctx actor.Context) {
	a := h.a
	if h.watching || a.spec.Vars == nil || !watched(a.alloc) || a.life.Phase() != phaseRunning {
		return
	}
	h.watching = true
	h.gen++
	h.stop = make(chan struct{})
	gen, index, clock, stop := h.gen, h.index, a.spec.Clock, h.stop
	sums := maps.Clone(h.sums)
	if sums == nil {
		sums = map[tmplKey][32]byte{}
	}
	al := proto.Clone(a.alloc).(*messages.Allocation)
	actors.Go(ctx, func(life context.Context) any {
		c, cancel := context.WithCancel(life)
		defer cancel()
		go func() {
			select {
			case <-stop:
				cancel()
			case <-c.Done():
			}
		}()
		for c.Err() == nil {
			m, at, err := h.watchOnce(c, al, index, sums)
			if err != nil {
				a.log.Warn("template watch failed, trying again", "error", err, "in", templateRetry)
				wait(c, clock, templateRetry)
				continue
			}
			if m != nil {
				m.gen = gen
				return m
			}
			index = at // nothing this allocation reads changed: wait from here
		}
		return nil
	})
}

// stopWatch ends the watch worker that runs, if one does.
func (h *templateHook) stopWatch() {
	if h.watching {
		close(h.stop)
		h.watching = false
	}
}

// onTaskRendered keeps what a task's start rendered and watches again
// from there (the watch's copy of the sums did not have it).
func (h *templateHook) onTaskRendered(ctx actor.Context, m *taskRendered) {
	if h.sums == nil {
		h.sums = map[tmplKey][32]byte{}
	}
	maps.Copy(h.sums, m.sums)
	if h.index == 0 || m.index < h.index {
		h.index = m.index
	}
	h.stopWatch()
	h.watchTemplates(ctx)
}

// onTaskState applies, once a task restored running is re-attached, the
// change modes of its templates that Prerun wrote anew.
func (h *templateHook) onTaskState(ctx actor.Context, task string, st *messages.TaskState) {
	changed := h.pending[task]
	evs := st.GetEvents()
	if len(changed) == 0 || st.GetState() != taskRunning || len(evs) == 0 || evs[len(evs)-1].GetType() != eventReattached {
		return
	}
	delete(h.pending, task)
	h.a.log.Info("templates changed while the agent was down", "task", task, "templates", len(changed))
	h.onApply(ctx, &templateApply{gen: h.gen, changed: changed})
}

// watched reports whether a task of the allocation has a template that is
// rendered more than once.
func watched(al *messages.Allocation) bool {
	for _, t := range groupOf(al).GetTasks() {
		for _, tt := range t.GetTemplates() {
			if !tt.GetOnce() {
				return true
			}
		}
	}
	return false
}

// wait blocks for d on the clock, or until ctx ends.
func wait(ctx context.Context, clock actors.Clock, d time.Duration) {
	done := make(chan struct{})
	t := clock.AfterFunc(d, func() { close(done) })
	defer t.Stop()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// watchOnce waits for the variables and services tables to pass index,
// renders every watched template again and writes those whose output
// changed: nil when none did, with the index it rendered at (the caller
// waits again from there).
func (h *templateHook) watchOnce(ctx context.Context, al *messages.Allocation, index uint64, sums map[tmplKey][32]byte) (*templatesChanged, uint64, error) {
	resp, err := h.read(ctx, &messages.VarReadRequest{Namespace: al.GetNamespace(), MinIndex: index, Wait: int64(varWait)})
	if err != nil || resp.GetIndex() <= index {
		return nil, index, err
	}
	m := &templatesChanged{index: resp.GetIndex(), sums: sums, env: map[string]map[string]string{}}
	w := &templateHook{a: h.a, env: m.env, sums: sums}
	for _, t := range groupOf(al).GetTasks() {
		for i, tt := range t.GetTemplates() {
			if tt.GetOnce() {
				continue
			}
			out, err := w.render(ctx, al, t, i)
			if err != nil {
				// A variable deleted, or a render that fails now: keep
				// the file as it is, as Nomad does, and wait for a change.
				h.a.log.Warn("template render failed; its file is kept", "task", t.GetName(), "template", i, "error", err)
				continue
			}
			k := tmplKey{t.GetName(), i}
			if old, ok := sums[k]; !ok || old == sha256.Sum256(out) {
				// unchanged, or not rendered yet: the task's start renders it
				continue
			}
			if err := w.apply(al, t, i, out); err != nil {
				return nil, index, err
			}
			m.changed = append(m.changed, k)
		}
	}
	if len(m.changed) == 0 {
		return nil, resp.GetIndex(), nil
	}
	return m, m.index, nil
}

// onTemplatesChanged keeps what the watch rendered, then applies the
// change modes after a random splay (the longest of the changed
// templates') and watches again.
func (h *templateHook) onTemplatesChanged(ctx actor.Context, m *templatesChanged) {
	if m.gen != h.gen {
		return
	}
	h.watching = false
	h.index, h.sums = m.index, m.sums
	var splay time.Duration
	for _, k := range m.changed {
		if tt := h.templateOf(k); tt != nil {
			splay = max(splay, time.Duration(tt.GetSplay()))
		}
	}
	if splay > 0 {
		d := time.Duration(rand.Int64N(int64(splay)))
		self, root, gen, changed := ctx.Self(), ctx.ActorSystem().Root, h.gen, m.changed
		h.a.spec.Clock.AfterFunc(d, func() { root.Send(self, &templateApply{gen: gen, changed: changed}) })
	} else {
		h.onApply(ctx, &templateApply{gen: h.gen, changed: m.changed})
	}
	h.watchTemplates(ctx)
}

func (h *templateHook) templateOf(k tmplKey) *messages.TaskTemplate {
	for _, t := range groupOf(h.a.alloc).GetTasks() {
		if t.GetName() == k.task && k.i < len(t.GetTemplates()) {
			return t.GetTemplates()[k.i]
		}
	}
	return nil
}

// onApply applies the changed templates' change modes to their tasks: a
// restart when one asks for it (it re-reads every file), else each
// distinct signal once, as Nomad does, and the change scripts in order.
func (h *templateHook) onApply(ctx actor.Context, m *templateApply) {
	if h.a.life.Phase() != phaseRunning {
		return
	}
	restart := map[string]bool{}
	signals := map[string]map[string]bool{}
	scripts := map[string][]*messages.ChangeScript{}
	for _, k := range m.changed {
		tt := h.templateOf(k)
		switch tt.GetChangeMode() {
		case changeRestart, "":
			restart[k.task] = true
		case changeSignal:
			if signals[k.task] == nil {
				signals[k.task] = map[string]bool{}
			}
			signals[k.task][tt.GetChangeSignal()] = true
		case changeScript:
			scripts[k.task] = append(scripts[k.task], tt.GetChangeScript())
		}
	}
	pids := map[string]*actor.PID{}
	for _, pid := range ctx.Children() {
		pids[taskOf(pid)] = pid
	}
	for _, task := range h.a.tasks {
		pid, ok := pids[task]
		if !ok {
			continue
		}
		if restart[task] {
			h.a.log.Info("template changed: restarting the task", "task", task)
			ctx.Send(pid, &messages.RestartTask{Reason: "Template with change_mode restart re-rendered"})
			continue
		}
		for sig := range signals[task] {
			h.a.log.Info("template changed: signalling the task", "task", task, "signal", sig)
			ctx.Send(pid, &messages.SignalTask{Signal: sig})
		}
		if len(scripts[task]) > 0 {
			h.a.log.Info("template changed: running its change script", "task", task)
			ctx.Send(pid, &runChangeScripts{scripts: scripts[task]})
		}
	}
}
