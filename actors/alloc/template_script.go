package alloc

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// change_mode script, as Nomad runs it: when a template with it renders
// anew, its change_script's command runs inside the task through the
// driver's exec (a driver that cannot exec runs it as a process in the
// task dir, as script checks do), within its timeout. A run that
// succeeds, or fails without fail_on_error, is a "Task hook message"
// event that says so; one that fails with fail_on_error is a "Task hook
// failed" event and the task is killed, failed.

// changeScript is Nomad's name of the change mode.
const changeScript = "script"

// eventHookMessage is the event of a change script's run, as Nomad names it.
const eventHookMessage = "Task hook message"

// maxScriptOutput bounds what a change script's run keeps of its output.
const maxScriptOutput = 1 << 10

// Messages of the change scripts.
type (
	// runChangeScripts asks a task actor to run the change scripts of
	// its templates that rendered anew.
	runChangeScripts struct{ scripts []*messages.ChangeScript }
	// changeScriptsRan: the worker ran them, in order.
	changeScriptsRan struct {
		gen  int
		runs []scriptRun
	}
)

// scriptRun is the outcome of one change script's run.
type scriptRun struct {
	script *messages.ChangeScript
	code   int
	out    string
	err    error
}

func (r scriptRun) failed() bool { return r.err != nil || r.code != 0 }

// onRunChangeScripts runs the scripts in a worker, one after the other,
// while the task runs.
func (a *taskActor) onRunChangeScripts(ctx actor.Context, m *runChangeScripts) {
	if a.phase != taskPhaseRunning || a.killing {
		a.log.Info("template changed but the task does not run: its change script is not run")
		return
	}
	drv, id, dir, gen := a.spec.Driver, a.spec.Start.ID, a.spec.Start.TaskDir, a.gen
	scripts := make([]*messages.ChangeScript, len(m.scripts))
	for i, s := range m.scripts {
		scripts[i] = proto.Clone(s).(*messages.ChangeScript)
	}
	actors.Go(ctx, func(life context.Context) any {
		var runs []scriptRun
		for _, s := range scripts {
			timeout := time.Duration(s.GetTimeout())
			if timeout <= 0 {
				timeout = 5 * time.Second
			}
			c, cancel := context.WithTimeout(life, timeout)
			code, out, err := runIn(c, drv, id, dir, append([]string{s.GetCommand()}, s.GetArgs()...), maxScriptOutput)
			if err == nil && c.Err() != nil {
				err = fmt.Errorf("timed out after %s", timeout)
			}
			cancel()
			if life.Err() != nil {
				return nil
			}
			runs = append(runs, scriptRun{script: s, code: code, out: out, err: err})
		}
		return &changeScriptsRan{gen: gen, runs: runs}
	})
}

// onChangeScriptsRan records each run's event; a failed run with
// fail_on_error kills the task, failed.
func (a *taskActor) onChangeScriptsRan(ctx actor.Context, m *changeScriptsRan) {
	if m.gen != a.gen || a.phase == taskPhaseDead {
		return
	}
	now := a.spec.Clock.Now()
	for _, r := range m.runs {
		s := r.script
		args := strings.Join(s.GetArgs(), " ")
		switch {
		case !r.failed():
			appendEvent(a.state, newEvent(eventHookMessage, fmt.Sprintf(
				"Template successfully ran script %s with arguments: %s. Exit code: %d", s.GetCommand(), args, r.code), now))
		case s.GetFailOnError():
			why := r.err
			if why == nil {
				why = fmt.Errorf("exit code %d: %s", r.code, strings.TrimSpace(r.out))
			}
			a.log.Warn("change script failed: killing the task", "command", s.GetCommand(), "error", why)
			appendEvent(a.state, newEvent(eventHookFailed, fmt.Sprintf("Template script %s failed with error: %v", s.GetCommand(), why), now))
			a.failKill = true
			a.onKill(ctx, &messages.KillTask{Reason: "Template script failed, task is being killed"})
			return
		default:
			why := "<nil>"
			if r.err != nil {
				why = r.err.Error()
			}
			appendEvent(a.state, newEvent(eventHookMessage, fmt.Sprintf(
				"Template failed to run script %s with arguments %s on change: %s Exit code: %d", s.GetCommand(), args, why, r.code), now))
		}
	}
	a.report(ctx)
}
