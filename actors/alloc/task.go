package alloc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/artifact"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/device"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// taskSpec is everything a task actor needs.
type taskSpec struct {
	AllocID string
	JobType string
	Task    *messages.Task
	Driver  driver.Driver
	DB      *clientstate.DB
	Clock   actors.Clock
	Logger  *slog.Logger
	// Start is the driver config of the task (dirs, env, resources).
	Start *driver.TaskConfig
	// Restored is the task's last stored state, nil for a new task.
	Restored *messages.TaskState
	// NetworkRecreated: the allocation's network namespace was made anew
	// on restore, so a task that is re-attached runs without a network; it
	// is stopped and started again in the new one.
	NetworkRecreated bool
	// Devices reserves DeviceIDs before every start (not on re-attach);
	// what the task needs goes into a copy of Start (reserveDevices). No
	// IDs: no devices.
	Devices   device.Plugin
	DeviceIDs []string
	// HandleRetry is the backoff between reads of the stored task handle
	// when one failed (zero: defaultLoadRetry); reads go on until one
	// works, as for the state file: a task that may run is never started
	// again for want of its handle.
	HandleRetry actors.Retry
	// Artifacts are fetched by Fetcher (nil: defaults) before the first
	// start (artifact_hook.go); local sources must lie in AllocDir.
	Artifacts []artifact.Artifact
	Fetcher   *artifact.Fetcher
	AllocDir  string
	// Templates renders the task's templates at every start, after the
	// artifacts (template_task.go); nil: the task has none.
	Templates renderFunc

	// readHandle reads the stored task handle; nil: DB.TaskHandle (tests
	// make it fail).
	readHandle func(allocID, task string) ([]byte, error)
}

// Worker results: messages a task actor sends itself.
type (
	// handleLoaded: the stored handle was read (nil: none stored), or
	// could not be (err).
	handleLoaded struct {
		handle *driver.TaskHandle
		err    error
	}
	retryHandle struct{}
	startResult struct {
		handle   *driver.TaskHandle
		err      error
		fetched  bool          // the artifacts are in place
		rendered *taskRendered // what the template step rendered, nil: none
	}
	recoverResult struct{ err error }
	// renewResult: the re-attached task that lost its network was stopped.
	renewResult struct{ err error }
	exitResult  struct {
		gen int
		res *driver.ExitResult
	}
	restartNow struct{ gen int }
	stopResult struct{ err error }
	// taskDestroyed: the driver's cleanup of a dead task is done.
	taskDestroyed struct{}
)

// taskActor runs one task.
type taskActor struct {
	actors.Lifetime // ends the workers on stop
	spec            *taskSpec
	phase           taskPhase
	state           *messages.TaskState
	tracker         *restartTracker
	gen             int // bumps on every start, so stale exits are ignored
	killing         bool
	destroying      bool // the driver's cleanup of the last run goes on
	timer           actors.Timer
	reads           *actors.Retrier // failed reads of the stored handle
	ops             userOps         // an operator's restart (task_ops.go)
	arts            artifactRun     // the artifact step (artifact_hook.go)
	tmpl            templateRun     // the template step (template_task.go)
	failKill        bool            // the kill under way fails the task (a change script's)
	log             *slog.Logger
}

// newTaskActor returns a producer for the task's actor.
func newTaskActor(spec *taskSpec) actor.Producer {
	return func() actor.Actor {
		st := &messages.TaskState{State: taskPending}
		if spec.Restored != nil {
			st = proto.Clone(spec.Restored).(*messages.TaskState)
		}
		pol := spec.Task.GetRestartPolicy()
		return &taskActor{
			spec: spec, state: st, tracker: newRestartTracker(pol, spec.JobType).forLifecycle(spec.Task.GetLifecycle()),
			log: spec.Logger.With("alloc", spec.AllocID, "task", spec.Task.GetName()),
		}
	}
}

// Phase names the actor's state for the actor tree.
func (a *taskActor) Phase() string { return a.phase.String() }

// Receive dispatches.
func (a *taskActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.onStarted(ctx)
	case *actor.Stopping:
		a.onStopping()
	case *handleLoaded:
		a.onHandleLoaded(ctx, m)
	case *retryHandle:
		if a.reads != nil && a.timer != nil { // not a timer of an earlier incarnation
			a.loadHandle(ctx)
		}
	case *startResult:
		a.onStartResult(ctx, m)
	case *recoverResult:
		a.onRecoverResult(ctx, m)
	case *renewResult:
		a.onRenewResult(ctx, m)
	case *exitResult:
		a.onExit(ctx, m)
	case *restartNow:
		a.onRestartNow(ctx, m)
	case *stopResult:
		a.onStopResult(m)
	case *templateBlocked:
		a.onTemplateBlocked(ctx, m)
	case *runChangeScripts:
		a.onRunChangeScripts(ctx, m)
	case *changeScriptsRan:
		a.onChangeScriptsRan(ctx, m)
	case *messages.KillTask:
		a.onKill(ctx, m)
	case *messages.SignalTask, *signalResult, *messages.RestartTask, *userStopResult, *restartAll, *taskDestroyed,
		*holdTask, *resumeTask:
		a.onOp(ctx, m) // an operator's signal or restart (task_ops.go)
	case *actor.Stopped, *actor.Restarting, *actor.Terminated:
	default:
		a.log.Warn("task actor: unexpected message", "type", fmt.Sprintf("%T", m))
	}
}

func (a *taskActor) become(ctx actor.Context, to taskPhase) {
	if !canTaskTransition(a.phase, to) {
		a.log.Error("illegal task transition", "from", a.phase, "to", to, "error", errIllegalTransition)
		return
	}
	a.log.Debug("task phase", "from", a.phase, "to", to)
	a.phase = to
}

func (a *taskActor) onStarted(ctx actor.Context) {
	if a.state.GetState() == taskDead {
		a.phase = taskPhaseDead
		a.report(ctx)
		return
	}
	a.loadHandle(ctx)
}

// loadHandle reads the stored task handle in a worker. A handle that does
// not decode is none (reading it again changes nothing); a failed read is
// read again (onHandleLoaded).
func (a *taskActor) loadHandle(ctx actor.Context) {
	a.timer = nil
	read, alloc, task := a.spec.readHandle, a.spec.AllocID, a.spec.Task.GetName()
	if read == nil {
		read = a.spec.DB.TaskHandle
	}
	actors.Go(ctx, func(_ context.Context) any {
		raw, err := read(alloc, task)
		if err != nil {
			return &handleLoaded{err: err}
		}
		if raw == nil {
			return &handleLoaded{}
		}
		h := &driver.TaskHandle{}
		if json.Unmarshal(raw, h) != nil {
			return &handleLoaded{}
		}
		return &handleLoaded{handle: h}
	})
}

// retryLoad arms the next read of the handle after a failed one: with
// the HandleRetry backoff, for ever (past its deadline, at its Max).
func (a *taskActor) retryLoad(ctx actor.Context, err error) {
	if a.reads == nil {
		a.reads = a.spec.HandleRetry.Or(defaultLoadRetry()).On(a.spec.Clock)
	}
	d, ok := a.reads.Next()
	if !ok {
		d = a.spec.HandleRetry.Or(defaultLoadRetry()).Max
	}
	a.log.Error("reading the task handle failed, reading again", "error", err, "attempt", a.reads.Tries(), "in", d)
	self, root := ctx.Self(), ctx.ActorSystem().Root
	a.timer = a.spec.Clock.AfterFunc(d, func() { root.Send(self, &retryHandle{}) })
}

func (a *taskActor) onStopping() {
	if a.timer != nil {
		a.timer.Stop()
	}
}

func (a *taskActor) onHandleLoaded(ctx actor.Context, m *handleLoaded) {
	if m.err != nil {
		a.retryLoad(ctx, m.err) // not "no handle": the task may run
		return
	}
	if m.handle == nil && a.killing {
		a.finish(ctx, false, newEvent(eventKilled, "", a.spec.Clock.Now()))
		return
	}
	// With a handle the task may still run: recover it even when a kill
	// is pending, so the kill reaches the process.
	if m.handle == nil {
		if len(a.state.Events) == 0 {
			appendEvent(a.state, newEvent(eventReceived, "", a.spec.Clock.Now()))
		}
		a.start(ctx)
		return
	}
	a.become(ctx, taskPhaseRecovering)
	drv, h := a.spec.Driver, m.handle
	actors.Go(ctx, func(c context.Context) any { return &recoverResult{err: drv.RecoverTask(c, h)} })
}

func (a *taskActor) onRecoverResult(ctx actor.Context, m *recoverResult) {
	if m.err != nil && a.killing {
		a.finish(ctx, false, newEvent(eventKilled, "", a.spec.Clock.Now()))
		return
	}
	if m.err != nil {
		a.log.Info("task not recovered, starting it again", "error", m.err)
		a.start(ctx)
		return
	}
	if a.spec.NetworkRecreated && !a.killing {
		a.renew(ctx)
		return
	}
	a.become(ctx, taskPhaseRunning)
	appendEvent(a.state, newEvent(eventReattached, "Task re-attached after agent restart", a.spec.Clock.Now()))
	a.state.State = taskRunning
	a.report(ctx)
	a.wait(ctx)
	if a.killing {
		a.stop(ctx)
	}
}

// renew stops a re-attached task whose network namespace is gone (its
// allocation's network was recreated), so that it starts again in the new
// one. This restart is not the task's failure: the restart policy does
// not count it.
func (a *taskActor) renew(ctx actor.Context) {
	a.log.Warn("the task's network namespace was recreated: restarting the task")
	appendEvent(a.state, newEvent(eventNetworkRecreated,
		"the allocation's network was recreated; restarting the task in it", a.spec.Clock.Now()))
	a.report(ctx)
	a.stopTask(ctx, func(c context.Context, drv driver.Driver, id string, err error) any {
		if err == nil || errors.Is(err, driver.ErrTaskNotFound) {
			err = drv.DestroyTask(c, id, true)
		}
		if errors.Is(err, driver.ErrTaskNotFound) {
			err = nil
		}
		return &renewResult{err: err}
	})
}

// stopTask stops the task in a worker (its kill signal, then SIGKILL
// after kill_timeout) and answers with what then makes of the result,
// within the same deadline.
func (a *taskActor) stopTask(ctx actor.Context, then func(c context.Context, drv driver.Driver, id string, err error) any) {
	timeout := a.killTimeout()
	drv, id, sig := a.spec.Driver, a.spec.Start.ID, a.spec.Task.GetKillSignal()
	actors.Go(ctx, func(life context.Context) any {
		c, cancel := context.WithTimeout(life, timeout+30*time.Second)
		defer cancel()
		return then(c, drv, id, drv.StopTask(c, id, timeout, sig))
	})
}

// onRenewResult starts the task again once its old process is gone (or
// ends it, when a kill came meanwhile).
func (a *taskActor) onRenewResult(ctx actor.Context, m *renewResult) {
	if a.phase != taskPhaseRecovering {
		return
	}
	if m.err != nil {
		a.log.Error("stopping the task for its new network failed", "error", m.err)
	}
	if a.killing {
		a.finish(ctx, false, newEvent(eventKilled, "", a.spec.Clock.Now()))
		return
	}
	a.start(ctx)
}

func (a *taskActor) start(ctx actor.Context) {
	a.become(ctx, taskPhaseStarting)
	a.gen++
	drv, cfg, db := a.spec.Driver, a.spec.Start, a.spec.DB
	alloc, task := a.spec.AllocID, a.spec.Task.GetName()
	plugin, ids, drvName := a.spec.Devices, a.spec.DeviceIDs, a.spec.Task.GetDriver()
	steps := prestartSteps{fetch: a.artifactStep(ctx), render: a.spec.Templates, first: !a.tmpl.rendered,
		blocked: a.templateBlockedFunc(ctx)}
	if steps.any() {
		a.arts.stop = make(chan struct{})
	}
	kept := maps.Clone(a.tmpl.env)
	actors.Go(ctx, withPrestart(steps, a.arts.stop, func(c context.Context, r *taskRendered) *startResult {
		cfg := withTemplateEnv(cfg, kept, r.envOf())
		cfg, err := reserveDevices(cfg, drvName, plugin, ids)
		if err != nil {
			return &startResult{err: err}
		}
		h, err := drv.StartTask(c, cfg)
		if err != nil {
			return &startResult{err: err}
		}
		raw, _ := json.Marshal(h)
		if err := db.PutTaskHandle(alloc, task, raw); err != nil {
			return &startResult{handle: h, err: fmt.Errorf("persist handle: %w", err)}
		}
		return &startResult{handle: h}
	}))
}

func (a *taskActor) onStartResult(ctx actor.Context, m *startResult) {
	now := a.spec.Clock.Now()
	a.arts.done(m.fetched)
	a.onRendered(ctx, m.rendered)
	a.answerRestarts(ctx, m.err)
	if m.err != nil && m.handle == nil && a.killing {
		a.finish(ctx, false, newEvent(eventKilled, "", now))
		return
	}
	if m.err != nil && m.handle == nil {
		a.log.Warn("task failed to start", "error", m.err)
		appendEvent(a.state, startFailedEvent(m.err, now))
		a.afterExit(ctx, nil)
		return
	}
	a.become(ctx, taskPhaseRunning)
	a.state.State = taskRunning
	a.state.StartedAt = rfc3339(now)
	appendEvent(a.state, newEvent(eventStarted, "", now))
	a.report(ctx)
	a.wait(ctx)
	if a.killing {
		a.stop(ctx)
	}
}

func (a *taskActor) wait(ctx actor.Context) {
	drv, id, gen := a.spec.Driver, a.spec.Start.ID, a.gen
	actors.Go(ctx, func(c context.Context) any {
		ch, err := drv.WaitTask(c, id)
		if err != nil {
			return &exitResult{gen: gen, res: &driver.ExitResult{ExitCode: -1, Err: err}}
		}
		res, ok := <-ch
		if !ok || res == nil {
			res = &driver.ExitResult{ExitCode: -1, Err: errors.New("wait channel closed")}
		}
		if c.Err() != nil {
			return nil // the actor is stopping; the task keeps running
		}
		return &exitResult{gen: gen, res: res}
	})
}

func (a *taskActor) onExit(ctx actor.Context, m *exitResult) {
	if m.gen != a.gen || a.phase == taskPhaseDead {
		return
	}
	appendEvent(a.state, exitEvent(m.res, a.spec.Clock.Now()))
	a.state.OOMKilled = m.res != nil && m.res.OOMKilled
	if a.killing {
		a.finish(ctx, a.failKill, newEvent(eventKilled, "", a.spec.Clock.Now()))
		return
	}
	if a.ops.restarting {
		a.restartInPlace(ctx)
		return
	}
	a.afterExit(ctx, m.res)
}

// afterExit applies the restart policy after the task ended (res nil: it
// never started).
func (a *taskActor) afterExit(ctx actor.Context, res *driver.ExitResult) {
	now := a.spec.Clock.Now()
	d := a.tracker.Next(res, now)
	switch {
	case d.Restart:
		a.become(ctx, taskPhaseRestarting)
		ev := newEvent(eventRestarting, fmt.Sprintf("Restart within policy: %s, restarting in %s", d.Reason, d.Delay), now)
		ev.StartDelay = int64(d.Delay)
		appendEvent(a.state, ev)
		a.state.State = taskPending
		a.state.Restarts++
		a.state.LastRestart = rfc3339(now.Add(d.Delay))
		a.report(ctx)
		self, root, gen := ctx.Self(), ctx.ActorSystem().Root, a.gen
		a.timer = a.spec.Clock.AfterFunc(d.Delay, func() { root.Send(self, &restartNow{gen: gen}) })
	case d.Failed:
		a.finish(ctx, true, newEvent(eventNotRestarting, d.Reason, now))
	default:
		a.finish(ctx, false, nil)
	}
}

func (a *taskActor) onRestartNow(ctx actor.Context, m *restartNow) {
	if m.gen != a.gen || a.phase != taskPhaseRestarting {
		return
	}
	a.start(ctx)
}

func (a *taskActor) onKill(ctx actor.Context, m *messages.KillTask) {
	if a.ops.reviving && !a.killing {
		a.cancelRevival(ctx, m.GetReason())
		return
	}
	if a.killing || a.phase == taskPhaseDead {
		return
	}
	a.killing = true
	appendEvent(a.state, newEvent(eventKilling, m.GetReason(), a.spec.Clock.Now()))
	switch a.phase {
	case taskPhaseRunning:
		a.stop(ctx)
	case taskPhaseRestarting:
		if a.ops.restarting { // an operator's restart: its exit ends the task
			a.report(ctx)
			return
		}
		if a.timer != nil {
			a.timer.Stop()
		}
		a.finish(ctx, false, newEvent(eventKilled, "", a.spec.Clock.Now()))
	default:
		// pending (its handle is loading), starting or recovering: stopped
		// once that answers (a fetch of artifacts is cut short)
		a.arts.abort()
		a.report(ctx)
	}
}

func (a *taskActor) stop(ctx actor.Context) {
	a.become(ctx, taskPhaseStopping)
	a.report(ctx)
	a.stopTask(ctx, func(_ context.Context, _ driver.Driver, _ string, err error) any { return &stopResult{err: err} })
}

func (a *taskActor) onStopResult(m *stopResult) {
	if m.err != nil && !errors.Is(m.err, driver.ErrTaskNotFound) {
		a.log.Error("stopping task failed", "error", m.err)
	}
}

// finish makes the task dead for good.
func (a *taskActor) finish(ctx actor.Context, failed bool, ev *messages.TaskEvent) {
	a.become(ctx, taskPhaseDead)
	a.answerRestarts(ctx, fmt.Errorf("%w: %q", errTaskNotRunning, a.spec.Task.GetName()))
	if ev != nil {
		appendEvent(a.state, ev)
	}
	a.state.State = taskDead
	a.state.Failed = failed
	a.state.FinishedAt = rfc3339(a.spec.Clock.Now())
	a.report(ctx)
	drv, id := a.spec.Driver, a.spec.Start.ID
	a.destroying = true
	actors.Go(ctx, func(life context.Context) any {
		// The parent may stop this actor as soon as it reads the report:
		// the cleanup outlives it, within its own bound, so that no task
		// record is left behind until the next agent start. A restart of
		// all tasks waits for it before the task runs again.
		c, cancel := context.WithTimeout(context.WithoutCancel(life), destroyTimeout)
		defer cancel()
		_ = drv.DestroyTask(c, id, false)
		return &taskDestroyed{}
	})
}

// destroyTimeout bounds the cleanup of a dead task in the driver.
const destroyTimeout = time.Minute

// report sends the task's state to the alloc actor.
func (a *taskActor) report(ctx actor.Context) {
	st := proto.Clone(a.state).(*messages.TaskState)
	ctx.Send(ctx.Parent(), &messages.TaskStateChanged{Task: a.spec.Task.GetName(), State: st})
}
