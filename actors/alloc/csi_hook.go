package alloc

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
)

// csiHook mounts the group's csi volumes, last of all hooks (they bind
// into the task dirs), and lets go of them first after the tasks are
// dead. Its prerun claims and mounts every volume in a worker
// (volumeSetup, csi_setup.go), reporting each volume's progress; a
// retryable failure is tried again with backoff (CSIConfig.ClaimRetry,
// ClaimAttempts), and a stop wanted meanwhile ends the setup. Its postrun
// spawns one volume actor (csi_volume.go) for every volume that may
// still be mounted here or claimed on the server, so that one stuck
// volume never holds up the others, and ends when they all finished.
type csiHook struct {
	a       *Actor
	cfg     *CSIConfig                            // with defaults; nil: no CSI support
	vols    map[string]*messages.AllocVolumeState // by group volume name
	pending map[string]bool                       // volume actors not finished yet
}

// Messages of the csi hook's setup worker.
type (
	// volumeProgress: the setup worker wrote a volume's record.
	volumeProgress struct{ rec *clientstate.VolumeMount }
	// volumesReady: the setup worker finished (err nil: all mounted).
	volumesReady struct{ err error }
)

// Name implements Hook.
func (h *csiHook) Name() string { return "csi" }

func (h *csiHook) plan() hookPlan {
	retry := &hookRetry{Retryable: retryableSetup}
	if h.cfg != nil {
		retry.Policy = h.cfg.ClaimRetry
		retry.Policy.Attempts = h.cfg.ClaimAttempts
	}
	return hookPlan{Name: h.Name(), Prerun: true, Postrun: true, PrerunRetry: retry}
}

// retryableSetup reports whether a failed setup may work later.
func retryableSetup(err error) bool {
	var se *setupError
	return errors.As(err, &se) && se.retry
}

// Restore implements restoreHook: the volumes' states as stored.
func (h *csiHook) Restore(stored *clientstate.StoredAlloc) {
	for name, v := range stored.Volumes {
		h.vols[name] = v.State
	}
}

// holding reports whether a csi volume may still be mounted or claimed.
func (h *csiHook) holding() bool {
	for _, st := range h.vols {
		if volumeActive(st.GetState()) {
			return true
		}
	}
	return false
}

func (h *csiHook) start(ctx actor.Context, p hookPhase) bool {
	if p == hookPrerun {
		return h.setup(ctx)
	}
	return h.teardown(ctx)
}

// setup claims and mounts the group's csi volumes in a worker.
func (h *csiHook) setup(ctx actor.Context) bool {
	a := h.a
	if len(csiVolumes(a.alloc)) == 0 {
		return false
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	var usage *usageClient
	if h.cfg != nil {
		usage = h.usage(ctx)
	}
	s := &volumeSetup{cfg: h.cfg, db: a.spec.DB, alloc: proto.Clone(a.alloc).(*messages.Allocation),
		root: a.spec.AllocRoot, clock: a.spec.Clock, usage: usage,
		progress: func(rec *clientstate.VolumeMount) { root.Send(self, &volumeProgress{rec: rec}) }}
	actors.Go(ctx, func(c context.Context) any {
		err := s.run(c)
		if c.Err() != nil {
			return nil // stopping: a restarted actor sets up again from the records
		}
		return &volumesReady{err: err}
	})
	return true
}

// usage is the client for the usage actor; without one in the config,
// the alloc actor starts its own child.
func (h *csiHook) usage(ctx actor.Context) *usageClient {
	if h.cfg.Usage == nil {
		props := h.a.spec.Registry.Props("csi-usage", NewUsageActor(newUsage(), h.a.log))
		h.cfg.Usage = ctx.Spawn(props)
	}
	return &usageClient{root: ctx.ActorSystem().Root, pid: h.cfg.Usage, timeout: h.cfg.CallTimeout}
}

func (h *csiHook) onProgress(ctx actor.Context, m *volumeProgress) {
	h.vols[m.rec.Name] = m.rec.State
	h.a.report(ctx)
}

func (h *csiHook) onReady(ctx actor.Context, m *volumesReady) {
	if h.a.current(h, hookPrerun) {
		h.a.hookFinished(ctx, hookPrerun, m.err)
	}
}

// teardown spawns the volume actors; false: no volume is held.
func (h *csiHook) teardown(ctx actor.Context) bool {
	a := h.a
	h.pending = map[string]bool{}
	if h.cfg == nil {
		return false
	}
	h.usage(ctx) // the volume actors take turns there too
	for _, name := range slices.Sorted(maps.Keys(h.vols)) {
		if !volumeActive(h.vols[name].GetState()) {
			continue
		}
		spec := &volumeSpec{AllocID: a.alloc.GetID(), NodeID: a.alloc.GetNodeID(), Name: name, CSI: h.cfg,
			DB: a.spec.DB, Clock: a.spec.Clock, Logger: a.spec.Logger}
		props := a.spec.Registry.Props("alloc-volume", newVolumeActor(spec))
		if _, err := ctx.SpawnNamed(props, "volumes/"+name); err != nil {
			a.log.Error("spawn volume actor", "volume", name, "error", err)
			continue
		}
		h.pending[name] = true
	}
	return len(h.pending) > 0
}

// onVolumeChanged reports a volume actor's progress; the postrun ends
// when the last one finished.
func (h *csiHook) onVolumeChanged(ctx actor.Context, m *volumeChanged) {
	if m.state != nil {
		h.vols[m.name] = m.state
	}
	h.a.report(ctx)
	if !m.done || !h.pending[m.name] {
		return
	}
	delete(h.pending, m.name)
	if len(h.pending) == 0 && h.a.current(h, hookPostrun) {
		h.a.hookFinished(ctx, hookPostrun, nil)
	}
}

// volumeStates copies the volume states for a report.
func (h *csiHook) volumeStates() map[string]*messages.AllocVolumeState {
	if len(h.vols) == 0 {
		return nil
	}
	out := make(map[string]*messages.AllocVolumeState, len(h.vols))
	for name, st := range h.vols {
		out[name] = proto.Clone(st).(*messages.AllocVolumeState)
	}
	return out
}
