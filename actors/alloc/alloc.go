package alloc

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/artifact"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/cni"
	"github.com/troupe-dev/troupe/runtime/device"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// Spec is everything an alloc actor needs.
type Spec struct {
	// Alloc is the allocation as first received, with its Job.
	Alloc     *messages.Allocation
	Drivers   map[string]driver.Driver
	DB        *clientstate.DB
	Clock     actors.Clock
	AllocRoot string
	// Hooks run after the alloc dir and devices hooks and before the csi
	// volumes are mounted, in order (their postrun in reverse).
	Hooks    []Hook
	Registry *actors.Registry
	Logger   *slog.Logger
	// CSI mounts the group's csi volumes before the tasks start and
	// unmounts them after; nil: no CSI support (such allocations fail).
	CSI *CSIConfig
	// Network gives a group with network { mode = "bridge" } its own
	// network namespace, before every other hook, and tears it down after
	// them; nil: no bridge networking (such allocations fail). Share one
	// between all alloc actors.
	Network cni.Networker
	// NetworkRetry is the backoff between network teardown attempts
	// (zero: defaultNetworkRetry); NetworkAttempts, when set, bounds its
	// tries.
	NetworkRetry    actors.Retry
	NetworkAttempts int
	// Devices reserves, at every start of a task, the device instances
	// the scheduler gave it (AllocatedResources.Tasks[task].Devices); nil:
	// no device plugin (such allocations fail). Share the client's one.
	Devices device.Plugin
	// Node is the client's node, read only: its ID, name, datacenter,
	// class, pool, attributes and meta fill ${node.*}, ${attr.*} and
	// ${meta.*} in the tasks' config and env; nil leaves them as written.
	Node *messages.Node
	// Artifacts fetches the tasks' artifacts before they start; nil:
	// runtime/artifact's default limits.
	Artifacts *artifact.Fetcher
	// Vars reads variables for the tasks' templates (any server answers);
	// nil: a template that reads a variable fails.
	Vars VarSource
	// Identities signs the tasks' workload identities, which the tasks
	// get in their env and secrets dir (identity blocks) and their
	// templates read with; nil: the tasks get none, and templates read
	// through Vars.
	Identities IdentitySource
	// IdentityRetry is the backoff between tries to get the identities
	// signed when a server could not sign them (zero:
	// defaultIdentityRetry).
	IdentityRetry actors.Retry
	// LoadRetry is the backoff between reads of the state file when one
	// failed (zero: defaultLoadRetry); reads go on until one works.
	LoadRetry actors.Retry

	// readAlloc reads the allocation's stored state; nil: DB.Alloc
	// (tests make it fail).
	readAlloc func(id string) (*clientstate.StoredAlloc, error)
	// readHandle reads a task's stored handle; nil: DB.TaskHandle.
	readHandle func(allocID, task string) ([]byte, error)
}

// defaultLoadRetry is the backoff between state file reads: 1 s doubling
// to 1 min, without end.
func defaultLoadRetry() actors.Retry {
	return actors.Retry{Initial: time.Second, Max: time.Minute, Multiplier: 2}
}

// Messages of the alloc actor.
type (
	// loaded: the state file was read (err nil; stored nil: nothing is
	// stored), or could not be.
	loaded struct {
		stored *clientstate.StoredAlloc
		err    error
	}
	// retryDue: the retry timer number seq fired.
	retryDue struct{ seq int }
	// crash makes the actor panic; tests use it to exercise supervision.
	crash struct{}
)

// Actor runs one allocation on the client: it carries out the effects of
// its Lifecycle, which walks the hook list (hookList) around the tasks.
type Actor struct {
	actors.Lifetime // ends the workers on stop
	spec            *Spec
	alloc           *messages.Allocation // nil until the state file was read
	tasks           []string
	states          map[string]*messages.TaskState
	life            *lifecycle
	hooks           []Hook
	// the hooks that hold state the tasks need
	network   *networkHook
	csi       *csiHook
	templates *templateHook
	idents    *identityHook
	checks    *checkSet // the service checks (checks.go)
	log       *slog.Logger

	// the task lifecycle (task_lifecycle.go): which tasks start when
	order      *taskOrder
	resumed    map[string]bool // tasks that ran before an agent restart
	rerun      map[string]bool // tasks held by a restart of all tasks, resumed at their turn (restart_all.go)
	killReason string          // why the tasks were told to stop
	advancing  bool            // advance runs (a step inside it asks again)
	again      bool

	timer    actors.Timer // the retry timer, while a step waits
	timerSeq int          // numbers the retry timers: a late one is ignored

	health healthWatch // deployment health (health.go)
}

// New returns a producer for an alloc actor.
func New(spec *Spec) actor.Producer {
	return func() actor.Actor {
		a := &Actor{spec: spec, log: spec.Logger.With("alloc", spec.Alloc.GetID())}
		a.network = &networkHook{a: a, retry: hookRetry{Policy: spec.NetworkRetry.Or(defaultNetworkRetry())}}
		if spec.NetworkAttempts > 0 {
			a.network.retry.Policy.Attempts = spec.NetworkAttempts
		}
		a.csi = &csiHook{a: a, vols: map[string]*messages.AllocVolumeState{}}
		a.templates = &templateHook{a: a}
		a.idents = &identityHook{a: a}
		if spec.CSI != nil {
			a.csi.cfg = spec.CSI.withDefaults()
		}
		a.hooks = a.hookList()
		plans := make([]hookPlan, len(a.hooks))
		for i, h := range a.hooks {
			plans[i] = planOf(h)
		}
		a.life = newLifecycle(plans, spec.LoadRetry.Or(defaultLoadRetry()))
		return a
	}
}

// Phase names the actor's state for the actor tree: the lifecycle's
// phase, and the hook whose phase runs or waits.
func (a *Actor) Phase() string {
	if i := a.life.Hook(); i >= 0 {
		return a.life.Phase().String() + " " + a.hooks[i].Name()
	}
	return a.life.Phase().String()
}

// Receive dispatches.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.onStarted(ctx)
	case *loaded:
		a.onLoaded(ctx, m)
	case *retryDue:
		a.onRetryDue(ctx, m)
	case *hookDone:
		a.onHookDone(ctx, m)
	case *messages.TaskStateChanged:
		a.onTaskState(ctx, m)
	case *messages.UpdateAlloc:
		a.onUpdate(ctx, m)
	case *messages.SignalAlloc:
		a.onSignalAlloc(ctx, m)
	case *messages.RestartAlloc:
		a.onRestartAlloc(ctx, m)
	case *networkReady:
		a.network.onReady(ctx, m)
	case *networkDown:
		a.network.onDown(ctx, m)
	case *volumeProgress:
		a.csi.onProgress(ctx, m)
	case *volumesReady:
		a.csi.onReady(ctx, m)
	case *volumeChanged:
		a.csi.onVolumeChanged(ctx, m)
	case *healthTick:
		a.onHealthTick(ctx, m)
	case *taskRendered:
		a.templates.onTaskRendered(ctx, m)
	case *templatesChanged:
		a.templates.onTemplatesChanged(ctx, m)
	case *templateApply:
		a.templates.onApply(ctx, m)
	case *renewDue:
		a.idents.onRenewDue(ctx, m)
	case *identitiesRenewed:
		a.idents.onRenewed(ctx, m)
	case *checkResult:
		a.onCheckResult(ctx, m)
	case *checkRestart:
		a.onCheckRestart(ctx, m)
	case *ChecksPassing:
		a.onChecksPassing(ctx, m)
	case *ChecksRequest:
		a.onChecksRequest(ctx)
	case *crash:
		panic("alloc actor: crash requested")
	case *actor.Stopping, *actor.Restarting:
		a.stopHealthTimer()
		a.onStopping()
	case *actor.Stopped, *actor.Terminated:
	default:
		a.log.Warn("alloc actor: unexpected message", "type", fmt.Sprintf("%T", m))
	}
}

// onStarted loads the durable state: after a supervisor restart (or an
// agent restart) the client state file is newer than the spawn spec.
func (a *Actor) onStarted(ctx actor.Context) {
	a.load(ctx)
}

// load reads the allocation's stored state in a worker.
func (a *Actor) load(ctx actor.Context) {
	read, id := a.spec.readAlloc, a.spec.Alloc.GetID()
	if read == nil {
		read = a.spec.DB.Alloc
	}
	actors.Go(ctx, func(_ context.Context) any {
		sa, err := read(id)
		return &loaded{stored: sa, err: err}
	})
}

func (a *Actor) onStopping() {
	a.stopTimer()
	a.idents.stopRenewal()
}

// onLoaded takes the allocation from the spawn spec and what the state
// file holds; a failed read changes nothing and is tried again.
func (a *Actor) onLoaded(ctx actor.Context, m *loaded) {
	if a.alloc != nil {
		return // a read from before a restart of this actor
	}
	if m.err != nil {
		a.log.Error("reading the allocation's state failed, reading again", "error", m.err, "attempt", a.life.Tries()+1)
		a.step(ctx, Loaded{Err: m.err, At: a.spec.Clock.Now()})
		return
	}
	a.alloc = proto.Clone(a.spec.Alloc).(*messages.Allocation)
	a.states = map[string]*messages.TaskState{}
	if m.stored != nil {
		a.restore(m.stored)
	}
	for _, t := range groupOf(a.alloc).GetTasks() {
		a.tasks = append(a.tasks, t.GetName())
	}
	a.spec.DB.PutAlloc(a.alloc)
	a.trackHealth()
	a.step(ctx, Loaded{
		BadName: checkNames(a.alloc), NoTasks: len(a.tasks) == 0,
		Terminal: terminal(a.alloc.GetClientStatus()), StopWanted: a.stopWanted(),
		Handles: m.stored != nil && len(m.stored.Handles) > 0, Holding: a.holding(),
		At: a.spec.Clock.Now(),
	})
}

// restore takes what the state file holds over the spawn spec, and gives
// the hooks their part.
func (a *Actor) restore(stored *clientstate.StoredAlloc) {
	st := stored.Alloc
	a.alloc.ClientStatus, a.alloc.ClientDescription = st.GetClientStatus(), st.GetClientDescription()
	if st.GetModifyIndex() > a.alloc.GetModifyIndex() {
		a.alloc.DesiredStatus, a.alloc.DesiredDescription = st.GetDesiredStatus(), st.GetDesiredDescription()
	}
	if st.GetNetworkStatus() != nil {
		a.alloc.NetworkStatus = st.GetNetworkStatus()
	}
	a.states = stored.TaskStates
	for _, h := range a.hooks {
		if r, ok := h.(restoreHook); ok {
			r.Restore(stored)
		}
	}
}

// step feeds the lifecycle one event and carries out its effects. An
// event the phase does not expect (a late result) is dropped.
func (a *Actor) step(ctx actor.Context, ev event) effects {
	from := a.life.Phase()
	eff, err := a.life.Step(ev)
	if err != nil {
		a.log.Debug("lifecycle event dropped", "error", err)
		return eff
	}
	if to := a.life.Phase(); to != from {
		a.log.Debug("alloc phase", "from", from, "to", to)
	}
	a.apply(ctx, eff)
	return eff
}

// apply carries out a step's effects, in the order Effects lists them.
func (a *Actor) apply(ctx actor.Context, eff effects) {
	if eff.StopTimer {
		a.stopTimer()
	}
	if eff.Refuse {
		a.refuse(eff.Description)
	}
	if eff.FailTasks {
		a.failUnstarted(eff.Description)
	}
	if eff.Status != "" {
		a.setStatus(ctx, eff.Status, eff.Description)
	}
	if eff.Report {
		a.report(ctx)
	}
	if eff.StartTasks {
		a.startTasks(ctx)
	}
	if eff.KillTasks != "" {
		a.killTasks(ctx, eff.KillTasks)
		a.advance(ctx)
	}
	if eff.Update {
		a.runUpdateHooks(ctx)
	}
	if eff.Run != nil && !a.startHook(ctx, *eff.Run) {
		a.hookFinished(ctx, eff.Run.Phase, nil) // nothing to do
	}
	if eff.RetryIn > 0 {
		a.armTimer(ctx, eff.RetryIn)
	}
	if eff.Load {
		a.load(ctx)
	}
	if eff.Released {
		a.released(ctx)
	}
	if eff.StartTasks {
		a.refresh(ctx)
		a.templates.watchTemplates(ctx)
	}
}

// armTimer sends RetryDue to the lifecycle after d.
func (a *Actor) armTimer(ctx actor.Context, d time.Duration) {
	a.stopTimer()
	a.timerSeq++
	self, root, seq := ctx.Self(), ctx.ActorSystem().Root, a.timerSeq
	a.timer = a.spec.Clock.AfterFunc(d, func() { root.Send(self, &retryDue{seq: seq}) })
}

func (a *Actor) stopTimer() {
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
}

func (a *Actor) onRetryDue(ctx actor.Context, m *retryDue) {
	if a.timer == nil || m.seq != a.timerSeq {
		return // stopped, or replaced
	}
	a.timer = nil
	a.step(ctx, RetryDue{})
}
