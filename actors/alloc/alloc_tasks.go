package alloc

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// spawnTask spawns the actor of one task; false: the task could not start
// (an unknown driver, a host volume that is not there), and its state
// says why.
func (a *Actor) spawnTask(ctx actor.Context, name string) bool {
	jobType := a.alloc.GetJob().GetType()
	for _, t := range groupOf(a.alloc).GetTasks() {
		if t.GetName() != name {
			continue
		}
		drv, ok := a.spec.Drivers[t.GetDriver()]
		if !ok {
			a.states[t.GetName()] = deadState(a.spec, fmt.Sprintf("%v: %q", errUnknownDriver, t.GetDriver()))
			return false
		}
		// A task restored running keeps what it was started with.
		if _, err := hostVolumeMounts(a.spec.Node, a.alloc, t); err != nil && a.states[t.GetName()].GetState() != taskRunning {
			a.states[t.GetName()] = setupFailedState(a.states[t.GetName()], err.Error(), a.spec.Clock.Now())
			return false
		}
		start := taskConfig(a.spec.AllocRoot, a.spec.Node, a.alloc, t, a.network.rec, a.csi.vols)
		a.idents.withEnv(t, start.Env)
		a.idents.startRenewal(ctx)
		spec := &taskSpec{
			AllocID: a.alloc.GetID(), JobType: jobType, Task: t, Driver: drv,
			DB: a.spec.DB, Clock: a.spec.Clock, Logger: a.spec.Logger,
			Start:            start,
			Restored:         a.states[t.GetName()],
			NetworkRecreated: a.network.recreated,
			Devices:          a.spec.Devices,
			DeviceIDs:        deviceIDs(a.alloc, t.GetName()),
			HandleRetry:      a.spec.LoadRetry,
			readHandle:       a.spec.readHandle,
			Artifacts:        taskArtifacts(t, start.TaskDir, refs{env: start.Env, node: a.spec.Node}),
			Fetcher:          a.spec.Artifacts,
			AllocDir:         filepath.Join(a.spec.AllocRoot, a.alloc.GetID()),
			Templates:        a.templates.renderStep(t),
		}
		props := a.spec.Registry.Props("task", newTaskActor(spec))
		if _, err := ctx.SpawnNamed(props, "tasks/"+t.GetName()); err != nil {
			a.log.Error("spawn task actor", "task", t.GetName(), "error", err)
		}
		return true
	}
	return false
}

func (a *Actor) onTaskState(ctx actor.Context, m *messages.TaskStateChanged) {
	a.states[m.GetTask()] = m.GetState()
	a.spec.DB.PutTaskState(a.alloc.GetID(), m.GetTask(), m.GetState())
	a.templates.onTaskState(ctx, m.GetTask(), m.GetState())
	if m.GetState().GetState() == taskDead {
		a.step(ctx, taskDied{Task: m.GetTask(), Failed: m.GetState().GetFailed(), Leader: a.isLeader(m.GetTask())})
	}
	a.advance(ctx)
	a.refresh(ctx)
	a.checkHealth(ctx)
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
		return // the state file is not read yet: the update is in spec.Alloc
	}
	a.alloc.DesiredStatus, a.alloc.DesiredDescription = in.GetDesiredStatus(), in.GetDesiredDescription()
	a.alloc.ModifyIndex, a.alloc.DesiredTransition = in.GetModifyIndex(), in.GetDesiredTransition()
	if in.GetJob() != nil && in.GetJobVersion() != a.alloc.GetJobVersion() {
		// An in-place update: the running tasks now belong to the new
		// version (the scheduler changed nothing they see).
		a.alloc.Job, a.alloc.JobVersion = in.GetJob(), in.GetJobVersion()
	}
	a.spec.DB.PutAlloc(a.alloc)
	a.step(ctx, updated{StopWanted: a.stopWanted(), Description: in.GetDesiredDescription()})
}

func (a *Actor) killTasks(ctx actor.Context, reason string) {
	if a.order != nil {
		a.order.Kill()
		a.killReason = reason
	}
	for _, pid := range ctx.Children() {
		if strings.HasPrefix(pid.GetId(), ctx.Self().GetId()+"/tasks/") {
			ctx.Send(pid, &messages.KillTask{Reason: reason})
		}
	}
}

// refresh recomputes the client status; once every task is dead the
// lifecycle tears the allocation down.
func (a *Actor) refresh(ctx actor.Context) {
	status := clientStatus(a.tasks, a.states)
	if a.order != nil {
		status = a.order.clientStatus(a.tasks, a.states)
	}
	desc := map[string]string{statusPending: "No tasks have started", statusRunning: "Tasks are running",
		statusComplete: "All tasks have completed", statusFailed: "Failed tasks"}[status]
	a.setStatus(ctx, status, desc)
	allDead := true
	for _, t := range a.tasks {
		allDead = allDead && a.states[t].GetState() == taskDead
	}
	if allDead {
		a.step(ctx, tasksDead{})
	}
}

func (a *Actor) setStatus(ctx actor.Context, status, desc string) {
	a.alloc.ClientStatus, a.alloc.ClientDescription = status, desc
	a.spec.DB.PutAlloc(a.alloc)
	a.report(ctx)
}

// failUnstarted marks every task that is not dead yet (none started: the
// setup failed) dead and failed with a Setup Failure event saying why, as
// Nomad does, so that the reason shows in the task's events too.
func (a *Actor) failUnstarted(why string) {
	for _, t := range a.tasks {
		if a.states[t].GetState() == taskDead {
			continue
		}
		a.states[t] = setupFailedState(a.states[t], why, a.spec.Clock.Now())
		a.spec.DB.PutTaskState(a.alloc.GetID(), t, a.states[t])
	}
}

// refuse gives the tasks of an allocation that checkNames refused a dead
// state saying why: nothing was made on the host for it, and nothing is
// torn down (a name that leaves the allocation directory must not lead a
// removal either). Only names that can travel in a report get one.
func (a *Actor) refuse(why string) {
	a.log.Warn("allocation refused: unsafe name", "error", why)
	for _, t := range a.tasks {
		if utf8.ValidString(t) && len(t) <= safepath.MaxName {
			a.states[t] = setupFailedState(nil, why, a.spec.Clock.Now())
		}
	}
}

func (a *Actor) stopWanted() bool {
	return a.alloc.ServerTerminalStatus()
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
		VolumeStates:      a.csi.volumeStates(),
		DeploymentStatus:  a.deploymentStatus(),
	}
	up.ServiceRegistrations = a.reportedServices()
	a.syncChecks(ctx)
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

// released tells the client actor that this allocation let go of its
// tasks, volumes and network, so its state may be forgotten.
func (a *Actor) released(ctx actor.Context) {
	if p := ctx.Parent(); p != nil {
		ctx.Send(p, &actors.AllocReleased{AllocID: a.alloc.GetID()})
	}
}

func deadState(spec *Spec, why string) *messages.TaskState {
	st := &messages.TaskState{State: taskDead, Failed: true}
	appendEvent(st, newEvent(eventDriverFailure, why, spec.Clock.Now()))
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
