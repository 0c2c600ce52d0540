package alloc

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/actors/volume"
	"github.com/troupe-dev/troupe/messages"
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
	// Hooks run after the alloc dir hook, in order.
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
	// NetworkRetry is the backoff between network teardown attempts, for
	// at most NetworkAttempts tries (zero: DefaultNetworkRetry,
	// DefaultNetworkAttempts).
	NetworkRetry    volume.RetryPolicy
	NetworkAttempts int
	// Devices reserves, at every start of a task, the device instances
	// the scheduler gave it (AllocatedResources.Tasks[task].Devices); nil:
	// no device plugin (such allocations fail). Share the client's one.
	Devices device.Plugin
	// Node is the client's node, read only: its ID, name, datacenter,
	// class, pool, attributes and meta fill ${node.*}, ${attr.*} and
	// ${meta.*} in the tasks' config and env; nil leaves them as written.
	Node *messages.Node
}

// Alloc actor phases.
const (
	phaseLoading     = "loading"
	phaseNetwork     = "setting up network"
	phasePrerun      = "prerun"
	phaseMounting    = "mounting volumes"
	phaseRunning     = "running"
	phaseStopping    = "stopping"
	phaseUnmounting  = "unmounting volumes"
	phasePostrun     = "postrun"
	phaseNetworkDown = "tearing down network"
	phaseTerminal    = "terminal"
)

// Worker results.
type (
	loaded    struct{ stored *clientstate.StoredAlloc }
	hooksDone struct {
		post bool
		err  error
	}
	// crash makes the actor panic; tests use it to exercise supervision.
	crash struct{}
)

// Actor runs one allocation on the client.
type Actor struct {
	spec   *Spec
	alloc  *messages.Allocation
	tasks  []string
	states map[string]*messages.TaskState
	phase  string
	hooks  []Hook
	log    *slog.Logger

	csi         *CSIConfig                            // with defaults; nil: no CSI support
	vols        map[string]*messages.AllocVolumeState // csi volumes, by group volume name
	pendingVols map[string]bool                       // volume actors not finished yet
	setupTries  int                                   // failed volume setups so far
	setupStart  time.Time                             // first failed volume setup
	setupTimer  actors.Timer                          // the next setup try, while waiting
	ctx         context.Context                       // cancelled on stop: ends the setup worker
	cancel      context.CancelFunc

	net          *clientstate.AllocNetwork // the network's record; nil: none held
	netRecreated bool                      // restored into a new netns: re-attached tasks lost theirs
	netRetry     volume.RetryPolicy
	netAttempts  int
	netTries     int          // failed network teardowns so far
	netStart     time.Time    // the first failed network teardown
	netTimer     actors.Timer // the next teardown try, while waiting
}

// New returns a producer for an alloc actor.
func New(spec *Spec) actor.Producer {
	return func() actor.Actor {
		hooks := append([]Hook{&AllocDirHook{Root: spec.AllocRoot}, &deviceHook{plugin: spec.Devices}}, spec.Hooks...)
		a := &Actor{spec: spec, hooks: hooks, phase: phaseLoading, vols: map[string]*messages.AllocVolumeState{},
			log: spec.Logger.With("alloc", spec.Alloc.GetID())}
		if spec.CSI != nil {
			a.csi = spec.CSI.withDefaults()
		}
		a.netRetry, a.netAttempts = spec.NetworkRetry, spec.NetworkAttempts
		if a.netRetry == (volume.RetryPolicy{}) {
			a.netRetry = DefaultNetworkRetry()
		}
		if a.netAttempts <= 0 {
			a.netAttempts = DefaultNetworkAttempts
		}
		return a
	}
}

// Phase names the actor's state for the actor tree.
func (a *Actor) Phase() string { return a.phase }

// Receive dispatches.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.onStarted(ctx)
	case *loaded:
		a.onLoaded(ctx, m)
	case *hooksDone:
		a.onHooksDone(ctx, m)
	case *messages.TaskStateChanged:
		a.onTaskState(ctx, m)
	case *messages.UpdateAlloc:
		a.onUpdate(ctx, m)
	case *volumeProgress:
		a.onVolumeProgress(ctx, m)
	case *volumesReady:
		a.onVolumesReady(ctx, m)
	case *retrySetup:
		a.onRetrySetup(ctx)
	case *volumeChanged:
		a.onVolumeChanged(ctx, m)
	case *networkReady:
		a.onNetworkReady(ctx, m)
	case *networkDown:
		a.onNetworkDown(ctx, m)
	case *retryNetworkTeardown:
		a.onRetryNetworkTeardown(ctx)
	case *crash:
		panic("alloc actor: crash requested")
	case *actor.Stopping, *actor.Restarting:
		a.onStopping()
	case *actor.Stopped, *actor.Terminated:
	default:
		a.log.Warn("alloc actor: unexpected message", "type", fmt.Sprintf("%T", m))
	}
}

// onStarted loads the durable state: after a supervisor restart (or an
// agent restart) the client state file is newer than the spawn spec.
func (a *Actor) onStarted(ctx actor.Context) {
	a.ctx, a.cancel = context.WithCancel(context.Background())
	db, id := a.spec.DB, a.spec.Alloc.GetID()
	actors.Go(ctx, func() any {
		sa, err := db.Alloc(id)
		if err != nil {
			return &loaded{}
		}
		return &loaded{stored: sa}
	})
}

func (a *Actor) onStopping() {
	if a.cancel != nil {
		a.cancel()
	}
	if a.setupTimer != nil {
		a.setupTimer.Stop()
	}
	if a.netTimer != nil {
		a.netTimer.Stop()
	}
}

func (a *Actor) onLoaded(ctx actor.Context, m *loaded) {
	a.alloc = proto.Clone(a.spec.Alloc).(*messages.Allocation)
	a.states = map[string]*messages.TaskState{}
	if m.stored != nil {
		st := m.stored.Alloc
		a.alloc.ClientStatus, a.alloc.ClientDescription = st.GetClientStatus(), st.GetClientDescription()
		if st.GetModifyIndex() > a.alloc.GetModifyIndex() {
			a.alloc.DesiredStatus, a.alloc.DesiredDescription = st.GetDesiredStatus(), st.GetDesiredDescription()
		}
		if st.GetNetworkStatus() != nil {
			a.alloc.NetworkStatus = st.GetNetworkStatus()
		}
		a.states = m.stored.TaskStates
		for name, v := range m.stored.Volumes {
			a.vols[name] = v.State
		}
		a.net = m.stored.Network
	}
	for _, t := range groupOf(a.alloc).GetTasks() {
		a.tasks = append(a.tasks, t.GetName())
	}
	a.spec.DB.PutAlloc(a.alloc)
	nameErr := checkNames(a.alloc)
	switch {
	case nameErr != nil && Terminal(a.alloc.GetClientStatus()):
		a.becomeTerminal(ctx)
	case nameErr != nil:
		a.failBadName(ctx, nameErr)
	case Terminal(a.alloc.GetClientStatus()) && a.holding():
		// stopped, but its volumes or its network were not all let go (an
		// agent restart in the middle): resume that
		a.report(ctx)
		a.teardown(ctx)
	case Terminal(a.alloc.GetClientStatus()):
		a.becomeTerminal(ctx)
	case len(a.tasks) == 0:
		a.fail(ctx, "task group not found in job")
	case a.stopWanted() && (m.stored == nil || len(m.stored.Handles) == 0) && a.holding():
		a.stopBeforeStart(ctx, "stopped before start")
	case a.stopWanted() && (m.stored == nil || len(m.stored.Handles) == 0):
		a.setStatus(ctx, StatusComplete, "stopped before start")
		a.becomeTerminal(ctx)
	default:
		a.setupNetwork(ctx)
	}
}

func (a *Actor) runHooks(ctx actor.Context, post bool) {
	hooks, al := a.hooks, proto.Clone(a.alloc).(*messages.Allocation)
	actors.Go(ctx, func() any {
		return &hooksDone{post: post, err: runHooks(context.Background(), hooks, al, post)}
	})
}

func (a *Actor) onHooksDone(ctx actor.Context, m *hooksDone) {
	if m.post {
		if m.err != nil {
			a.log.Error("postrun hooks failed", "error", m.err)
		}
		a.releaseNetwork(ctx)
		return
	}
	if m.err != nil {
		a.fail(ctx, "setup failed: "+m.err.Error())
		return
	}
	if len(csiVolumes(a.alloc)) > 0 {
		a.setupVolumes(ctx)
		return
	}
	a.startTasks(ctx)
}

func (a *Actor) startTasks(ctx actor.Context) {
	a.phase = phaseRunning
	a.spawnTasks(ctx)
	if a.stopWanted() {
		a.killTasks(ctx, "allocation stopped")
	}
}

func (a *Actor) spawnTasks(ctx actor.Context) {
	jobType := a.alloc.GetJob().GetType()
	for _, t := range groupOf(a.alloc).GetTasks() {
		drv, ok := a.spec.Drivers[t.GetDriver()]
		if !ok {
			a.states[t.GetName()] = deadState(a.spec, fmt.Sprintf("%v: %q", ErrUnknownDriver, t.GetDriver()))
			continue
		}
		spec := &TaskSpec{
			AllocID: a.alloc.GetID(), JobType: jobType, Task: t, Driver: drv,
			DB: a.spec.DB, Clock: a.spec.Clock, Logger: a.spec.Logger,
			Start:            taskConfig(a.spec.AllocRoot, a.spec.Node, a.alloc, t, a.net, a.vols),
			Restored:         a.states[t.GetName()],
			NetworkRecreated: a.netRecreated,
			Devices:          a.spec.Devices,
			DeviceIDs:        deviceIDs(a.alloc, t.GetName()),
		}
		props := a.spec.Registry.Props("task", NewTaskActor(spec))
		if _, err := ctx.SpawnNamed(props, "tasks/"+t.GetName()); err != nil {
			a.log.Error("spawn task actor", "task", t.GetName(), "error", err)
		}
	}
	a.refresh(ctx)
}

func (a *Actor) onTaskState(ctx actor.Context, m *messages.TaskStateChanged) {
	a.states[m.GetTask()] = m.GetState()
	a.spec.DB.PutTaskState(a.alloc.GetID(), m.GetTask(), m.GetState())
	if m.GetState().GetState() == TaskDead && a.phase == phaseRunning {
		if m.GetState().GetFailed() {
			a.killTasks(ctx, EventSiblingFailed+": "+m.GetTask())
		} else if a.isLeader(m.GetTask()) {
			a.killTasks(ctx, "leader task "+m.GetTask()+" is dead")
		}
	}
	a.refresh(ctx)
}

func (a *Actor) onUpdate(ctx actor.Context, m *messages.UpdateAlloc) {
	in := m.GetAlloc()
	// A restarted actor starts from the newest view; an update without a
	// job (a stop the client made up) changes only the desired status.
	if in.GetJob() != nil {
		a.spec.Alloc = in
	} else {
		c := proto.Clone(a.spec.Alloc).(*messages.Allocation)
		c.DesiredStatus, c.DesiredDescription = in.GetDesiredStatus(), in.GetDesiredDescription()
		a.spec.Alloc = c
	}
	if a.alloc == nil {
		return
	}
	a.alloc.DesiredStatus, a.alloc.DesiredDescription = in.GetDesiredStatus(), in.GetDesiredDescription()
	a.alloc.ModifyIndex, a.alloc.DesiredTransition = in.GetModifyIndex(), in.GetDesiredTransition()
	if in.GetJob() != nil && in.GetJobVersion() != a.alloc.GetJobVersion() {
		// An in-place update: the running tasks now belong to the new
		// version (the scheduler changed nothing they see).
		a.alloc.Job, a.alloc.JobVersion = in.GetJob(), in.GetJobVersion()
	}
	a.spec.DB.PutAlloc(a.alloc)
	switch {
	case a.stopWanted() && a.phase == phaseRunning:
		a.killTasks(ctx, "allocation stopped: "+in.GetDesiredDescription())
	case a.stopWanted() && a.phase == phaseMounting && a.setupTimer != nil:
		a.stopBeforeStart(ctx, "allocation stopped before its volumes were ready")
	}
}

func (a *Actor) killTasks(ctx actor.Context, reason string) {
	for _, pid := range ctx.Children() {
		if strings.HasPrefix(pid.GetId(), ctx.Self().GetId()+"/tasks/") {
			ctx.Send(pid, &messages.KillTask{Reason: reason})
		}
	}
	if a.phase == phaseRunning {
		a.phase = phaseStopping
	}
}

// refresh recomputes the client status; once every task is dead it
// unmounts the csi volumes, then runs the postrun hooks.
func (a *Actor) refresh(ctx actor.Context) {
	status := ClientStatus(a.tasks, a.states)
	desc := map[string]string{StatusPending: "No tasks have started", StatusRunning: "Tasks are running",
		StatusComplete: "All tasks have completed", StatusFailed: "Failed tasks"}[status]
	a.setStatus(ctx, status, desc)
	allDead := true
	for _, t := range a.tasks {
		allDead = allDead && a.states[t].GetState() == TaskDead
	}
	if allDead && (a.phase == phaseRunning || a.phase == phaseStopping) {
		a.teardown(ctx)
	}
}

func (a *Actor) setStatus(ctx actor.Context, status, desc string) {
	a.alloc.ClientStatus, a.alloc.ClientDescription = status, desc
	a.spec.DB.PutAlloc(a.alloc)
	a.report(ctx)
}

// fail ends an allocation whose tasks never ran; volumes that were
// mounted are unmounted, and the network torn down, first.
func (a *Actor) fail(ctx actor.Context, why string) {
	a.phase = phaseTerminal
	a.failUnstarted(why)
	a.setStatus(ctx, StatusFailed, why)
	if a.holding() {
		a.teardown(ctx)
		return
	}
	a.released(ctx)
}

func (a *Actor) stopWanted() bool {
	d := a.alloc.GetDesiredStatus()
	return d == "stop" || d == "evict"
}

func (a *Actor) isLeader(task string) bool {
	for _, t := range groupOf(a.alloc).GetTasks() {
		if t.GetName() == task {
			return t.GetLeader()
		}
	}
	return false
}

// report tells the parent (the client's node actor) the allocation's
// client-side status.
func (a *Actor) report(ctx actor.Context) {
	up := &messages.Allocation{
		ID: a.alloc.GetID(), ClientStatus: a.alloc.GetClientStatus(),
		ClientDescription: a.alloc.GetClientDescription(),
		TaskStates:        map[string]*messages.TaskState{},
		ModifyTime:        a.spec.Clock.Now().UnixNano(),
		VolumeStates:      a.volumeStates(),
	}
	if st := a.alloc.GetNetworkStatus(); st != nil {
		up.NetworkStatus = proto.Clone(st).(*messages.NetworkStatus)
	}
	for _, t := range a.tasks {
		if st := a.states[t]; st != nil {
			up.TaskStates[t] = proto.Clone(st).(*messages.TaskState)
		}
	}
	ctx.Send(ctx.Parent(), &messages.AllocUpdated{Alloc: up})
}

func deadState(spec *Spec, why string) *messages.TaskState {
	st := &messages.TaskState{State: TaskDead, Failed: true}
	appendEvent(st, newEvent(EventDriverFailure, why, spec.Clock.Now()))
	return st
}

// Tasks lists the task names of an allocation's group, for callers that
// need them without an actor.
func Tasks(a *messages.Allocation) []string {
	var out []string
	for _, t := range groupOf(a).GetTasks() {
		out = append(out, t.GetName())
	}
	return slices.Clip(out)
}

// becomeTerminal ends the actor's work: it reports the final status and
// tells the client that the allocation holds nothing on the host anymore.
func (a *Actor) becomeTerminal(ctx actor.Context) {
	a.phase = phaseTerminal
	a.report(ctx)
	a.released(ctx)
}

// released tells the client actor that this allocation let go of its
// tasks, volumes and network, so its state may be forgotten.
func (a *Actor) released(ctx actor.Context) {
	if p := ctx.Parent(); p != nil {
		ctx.Send(p, &actors.AllocReleased{AllocID: a.alloc.GetID()})
	}
}
