package alloc

import (
	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/messages"
)

// Task lifecycle hooks (a task's lifecycle block); "" is a main task.
const (
	hookMain      = ""
	hookPrestart  = jobspec.HookPrestart
	hookPoststart = jobspec.HookPoststart
	hookPoststop  = jobspec.HookPoststop
)

// eventMainDead is the kill reason (and the sidecars' Killing event) once
// the main tasks are dead, as Nomad names it.
const eventMainDead = "Main Tasks Dead"

// taskRole is what the order knows of one task: its hook and whether it is
// a sidecar.
type taskRole struct {
	Name    string
	Hook    string
	Sidecar bool
}

// orderStep is what the alloc actor must do after the order looked at the
// task states: spawn Start, give Skip a dead state (they never start: the
// allocation is stopping) and, with MainDead, stop the sidecars.
type orderStep struct {
	Start    []string
	Skip     []string
	MainDead bool
}

func (s orderStep) empty() bool { return len(s.Start) == 0 && len(s.Skip) == 0 && !s.MainDead }

// taskOrder decides, from the task states alone, when each task of an
// allocation starts, as Nomad's task lifecycle does: prestart tasks first;
// the main tasks once every prestart task finished successfully (a
// sidecar: runs); poststart tasks once every main task started; poststop
// tasks once every other task is dead. Once the allocation stops (Kill),
// tasks that did not start never do, except the poststop ones. When every
// task that is not a sidecar (nor poststop) is dead while a sidecar runs,
// the sidecars are stopped (MainDead, once). It does no I/O.
type taskOrder struct {
	roles    []taskRole
	spawned  map[string]bool
	skipped  map[string]bool
	killing  bool // the allocation stops: no task starts but poststop ones
	mainDead bool // MainDead was returned
}

// newTaskOrder returns the order of a group's tasks.
func newTaskOrder(tasks []*messages.Task) *taskOrder {
	o := &taskOrder{spawned: map[string]bool{}, skipped: map[string]bool{}}
	for _, t := range tasks {
		o.roles = append(o.roles, taskRole{Name: t.GetName(), Hook: t.GetLifecycle().GetHook(),
			Sidecar: t.GetLifecycle().GetSidecar()})
	}
	return o
}

// Kill records that the allocation stops.
func (o *taskOrder) Kill() { o.killing = true }

// Rerun makes tasks wait for their turn again (an operator's restart of
// all tasks runs them in lifecycle order once more); the poststop ones
// never start before their turn, so they are not among them.
func (o *taskOrder) Rerun(tasks []string) {
	for _, t := range tasks {
		delete(o.spawned, t)
	}
}

// Waiting reports whether a task was neither started nor skipped yet.
func (o *taskOrder) Waiting(task string) bool {
	return !o.spawned[task] && !o.skipped[task]
}

// Next returns what to do now. Each task is started or skipped once;
// tasks in resumed ran before (an agent restart) and are spawned again
// first, whatever their hook.
func (o *taskOrder) Next(states map[string]*messages.TaskState, resumed map[string]bool) orderStep {
	var s orderStep
	start := func(r taskRole) {
		if o.Waiting(r.Name) {
			o.spawned[r.Name] = true
			s.Start = append(s.Start, r.Name)
		}
	}
	for _, r := range o.roles {
		if resumed[r.Name] {
			start(r)
		}
	}
	if o.killing {
		for _, r := range o.roles {
			if r.Hook != hookPoststop && o.Waiting(r.Name) {
				o.skipped[r.Name] = true
				s.Skip = append(s.Skip, r.Name)
			}
		}
	} else {
		o.startReady(states, start)
	}
	if o.othersDead(states) {
		for _, r := range o.roles {
			if r.Hook == hookPoststop {
				start(r)
			}
		}
	}
	if !o.killing && !o.mainDead && o.sidecarAlone(states) {
		o.mainDead, s.MainDead = true, true
	}
	return s
}

// startReady starts the prestart tasks, and the main and poststart ones
// whose turn it is.
func (o *taskOrder) startReady(states map[string]*messages.TaskState, start func(taskRole)) {
	prestartDone, mainStarted := true, true
	for _, r := range o.roles {
		st := states[r.Name]
		switch {
		case r.Hook == hookPrestart:
			start(r)
			ok := succeeded(st)
			if r.Sidecar {
				ok = st.GetState() == taskRunning && !restartPending(st)
			}
			prestartDone = prestartDone && ok && !o.Waiting(r.Name)
		case r.Hook == hookMain:
			mainStarted = mainStarted && o.spawned[r.Name] && (st.GetState() == taskRunning || succeeded(st))
		}
	}
	if !prestartDone {
		return
	}
	for _, r := range o.roles {
		if r.Hook == hookMain {
			start(r)
		}
	}
	if !mainStarted {
		return
	}
	for _, r := range o.roles {
		if r.Hook == hookPoststart {
			start(r)
		}
	}
}

// othersDead reports whether every task but the poststop ones is dead (or
// was skipped).
func (o *taskOrder) othersDead(states map[string]*messages.TaskState) bool {
	for _, r := range o.roles {
		if r.Hook != hookPoststop && !o.skipped[r.Name] && states[r.Name].GetState() != taskDead {
			return false
		}
	}
	return true
}

// sidecarAlone reports whether a started sidecar is not dead while every
// task that is neither a sidecar nor poststop started and is dead.
func (o *taskOrder) sidecarAlone(states map[string]*messages.TaskState) bool {
	alive := false
	for _, r := range o.roles {
		dead := states[r.Name].GetState() == taskDead
		switch {
		case r.Hook == hookPoststop:
		case r.Sidecar:
			alive = alive || (o.spawned[r.Name] && !dead)
		case !o.spawned[r.Name] || !dead:
			return false
		}
	}
	return alive
}

// forLifecycle makes a lifecycle task's successful exit final as Nomad's
// restart tracker does: a prestart task's unless it is a sidecar, and a
// poststop task's always (a poststart task follows the job type).
func (r *restartTracker) forLifecycle(lc *messages.TaskLifecycle) *restartTracker {
	switch lc.GetHook() {
	case hookPrestart:
		r.batch = !lc.GetSidecar()
	case hookPoststop:
		r.batch = true
	}
	return r
}

// restartPending reports whether a restart was asked of the task and it
// has not started since: its last Restart Signaled event has no Started
// after it. A sidecar being restarted still says running until it stops.
func restartPending(st *messages.TaskState) bool {
	for i := len(st.GetEvents()) - 1; i >= 0; i-- {
		switch st.GetEvents()[i].GetType() {
		case eventStarted:
			return false
		case eventRestartSignaled:
			return true
		}
	}
	return false
}

// succeeded reports whether a task finished without failing.
func succeeded(st *messages.TaskState) bool {
	return st.GetState() == taskDead && !st.GetFailed()
}

// clientStatus is the allocation's client status while some tasks wait
// for their turn: those do not keep it pending once the others run, and
// the others being dead does not complete it.
func (o *taskOrder) clientStatus(tasks []string, states map[string]*messages.TaskState) string {
	var active []string
	for _, t := range tasks {
		if !o.Waiting(t) {
			active = append(active, t)
		}
	}
	status := clientStatus(active, states)
	if len(active) < len(tasks) && (len(active) == 0 || status == statusComplete) {
		return statusPending
	}
	return status
}
