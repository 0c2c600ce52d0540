package alloc

import (
	"errors"
	"maps"
	"slices"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
)

// Messages of the alloc actor's csi volume setup.
type (
	// volumeProgress: the setup worker wrote a volume's record.
	volumeProgress struct{ rec *clientstate.VolumeMount }
	// volumesReady: the setup worker finished (err nil: all mounted).
	volumesReady struct{ err error }
	retrySetup   struct{}
)

// setupVolumes claims and mounts the group's csi volumes in a worker;
// the tasks start once it answers.
func (a *Actor) setupVolumes(ctx actor.Context) {
	a.phase = phaseMounting
	a.setupTimer = nil
	self, root := ctx.Self(), ctx.ActorSystem().Root
	s := &volumeSetup{cfg: a.csi, db: a.spec.DB, alloc: proto.Clone(a.alloc).(*messages.Allocation),
		root: a.spec.AllocRoot, clock: a.spec.Clock,
		progress: func(rec *clientstate.VolumeMount) { root.Send(self, &volumeProgress{rec: rec}) }}
	c := a.ctx
	actors.Go(ctx, func() any {
		err := s.run(c)
		if c.Err() != nil {
			return nil // stopping: a restarted actor sets up again from the records
		}
		return &volumesReady{err: err}
	})
}

func (a *Actor) onVolumeProgress(ctx actor.Context, m *volumeProgress) {
	a.vols[m.rec.Name] = m.rec.State
	a.report(ctx)
}

func (a *Actor) onVolumesReady(ctx actor.Context, m *volumesReady) {
	if a.phase != phaseMounting {
		return
	}
	if m.err == nil {
		a.startTasks(ctx)
		return
	}
	var se *setupError
	a.setupTries++
	if errors.As(m.err, &se) && se.retry && a.setupTries < a.csi.ClaimAttempts && !a.stopWanted() {
		now := a.spec.Clock.Now()
		if a.setupStart.IsZero() {
			a.setupStart = now
		}
		if d, ok := a.csi.ClaimRetry.Delay(a.setupTries, now.Sub(a.setupStart)); ok {
			a.log.Warn("volume setup failed, retrying", "error", m.err, "attempt", a.setupTries, "in", d)
			self, root := ctx.Self(), ctx.ActorSystem().Root
			a.setupTimer = a.spec.Clock.AfterFunc(d, func() { root.Send(self, &retrySetup{}) })
			return
		}
	}
	if a.stopWanted() {
		a.stopBeforeStart(ctx, "allocation stopped before its volumes were ready")
		return
	}
	a.log.Error("volume setup failed", "error", m.err)
	a.fail(ctx, "setup failed: "+m.err.Error())
}

// failUnstarted marks every task that is not dead yet (none started: the
// setup failed) dead and failed with a Setup Failure event saying why, as
// Nomad does, so that the reason shows in the task's events too.
func (a *Actor) failUnstarted(why string) {
	for _, t := range a.tasks {
		if a.states[t].GetState() == TaskDead {
			continue
		}
		a.states[t] = setupFailedState(a.states[t], why, a.spec.Clock.Now())
		a.spec.DB.PutTaskState(a.alloc.GetID(), t, a.states[t])
	}
}

func (a *Actor) onRetrySetup(ctx actor.Context) {
	if a.phase != phaseMounting || a.setupTimer == nil {
		return
	}
	a.setupVolumes(ctx)
}

// stopBeforeStart ends an allocation stopped while its volumes were set
// up: nothing ran, and what was mounted is unmounted.
func (a *Actor) stopBeforeStart(ctx actor.Context, why string) {
	if a.setupTimer != nil {
		a.setupTimer.Stop()
		a.setupTimer = nil
	}
	a.setStatus(ctx, StatusComplete, why)
	a.teardown(ctx)
}

// teardown spawns one volume actor for every csi volume that may still be
// mounted here or claimed on the server, so that one stuck volume never
// holds up the others; the postrun hooks run once they all finished.
func (a *Actor) teardown(ctx actor.Context) {
	a.pendingVols = map[string]bool{}
	if a.csi != nil {
		for _, name := range slices.Sorted(maps.Keys(a.vols)) {
			if !volumeActive(a.vols[name].GetState()) {
				continue
			}
			spec := &VolumeSpec{AllocID: a.alloc.GetID(), NodeID: a.alloc.GetNodeID(), Name: name, CSI: a.csi,
				DB: a.spec.DB, Clock: a.spec.Clock, Logger: a.spec.Logger}
			props := a.spec.Registry.Props("alloc-volume", NewVolumeActor(spec))
			if _, err := ctx.SpawnNamed(props, "volumes/"+name); err != nil {
				a.log.Error("spawn volume actor", "volume", name, "error", err)
				continue
			}
			a.pendingVols[name] = true
		}
	}
	if len(a.pendingVols) > 0 {
		a.phase = phaseUnmounting
		return
	}
	a.phase = phasePostrun
	a.runHooks(ctx, true)
}

func (a *Actor) onVolumeChanged(ctx actor.Context, m *volumeChanged) {
	if m.state != nil {
		a.vols[m.name] = m.state
	}
	a.report(ctx)
	if !m.done || !a.pendingVols[m.name] {
		return
	}
	delete(a.pendingVols, m.name)
	if len(a.pendingVols) == 0 && a.phase == phaseUnmounting {
		a.phase = phasePostrun
		a.runHooks(ctx, true)
	}
}

// activeVolumes reports whether a csi volume may still be mounted or
// claimed.
func (a *Actor) activeVolumes() bool {
	for _, st := range a.vols {
		if volumeActive(st.GetState()) {
			return true
		}
	}
	return false
}

// volumeStates copies the volume states for a report.
func (a *Actor) volumeStates() map[string]*messages.AllocVolumeState {
	if len(a.vols) == 0 {
		return nil
	}
	out := make(map[string]*messages.AllocVolumeState, len(a.vols))
	for name, st := range a.vols {
		out[name] = proto.Clone(st).(*messages.AllocVolumeState)
	}
	return out
}
