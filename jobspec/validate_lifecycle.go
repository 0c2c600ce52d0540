package jobspec

import "github.com/troupe-dev/troupe/messages"

// Lifecycle hooks a task's lifecycle block names (Nomad's
// TaskLifecycleHookPrestart, ...).
const (
	HookPrestart  = "prestart"
	HookPoststart = "poststart"
	HookPoststop  = "poststop"
)

// validateLifecycle checks a lifecycle block as Nomad does: the hook is
// required and one of prestart, poststart and poststop.
func validateLifecycle(c checker, lc *messages.TaskLifecycle) {
	switch lc.Hook {
	case HookPrestart, HookPoststart, HookPoststop:
	case "":
		c.addf("no lifecycle hook provided (hook must be prestart, poststart or poststop)")
	default:
		c.addf("invalid hook %s (hook must be prestart, poststart or poststop)", shown(lc.Hook))
	}
}

// validateLifecycles checks what a group's lifecycle blocks need together:
// at least one main task (one without a lifecycle block) and at most one
// leader, as Nomad does.
func validateLifecycles(c checker, g *messages.TaskGroup) {
	if len(g.Tasks) == 0 {
		return // "group must have at least one task" says it
	}
	main, leaders := 0, 0
	for _, t := range g.Tasks {
		if t.GetLifecycle() == nil {
			main++
		}
		if t.GetLeader() {
			leaders++
		}
	}
	if main == 0 {
		c.addf("missing main task: a group needs at least one task without a lifecycle block")
	}
	if leaders > 1 {
		c.addf("only one task may be marked as leader")
	}
}
