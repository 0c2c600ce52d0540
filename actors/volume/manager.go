package volume

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// Child name prefixes under the manager: server/volumes/v/<volume ID> and
// server/volumes/c/<plugin ID>.
const (
	volumePrefix     = "v/"
	controllerPrefix = "c/"
)

// manager is the leader's volume manager ("server/volumes"). It owns one
// volume actor per volume in use (v/<id>) and one controller actor per
// plugin (c/<plugin>), rebuilt from the replicated state when it starts;
// it routes client and operator requests, controller results and the
// FSM's events to them, and decides when a claim is released or its node
// plugin abandoned.
type manager struct {
	actors.Lifetime // ends the workers on stop
	spec            *ManagerSpec
	vols            map[string]*actor.PID // volume actors by volume ID
	dying           map[string]bool       // volume actors told to stop
	deferred        map[string][]envelope // requests for a dying actor's successor
	ctrls           map[string]*actor.PID // controller actors by plugin ID
	children        map[string]string     // child PID ID -> child name
	creates         map[string]*creating  // create-volume requests by volume ID
	stopping        bool
	log             *slog.Logger
}

// NewManager returns a producer for the volume manager. The agent spawns
// it as "volumes" under its server actor while this server leads and
// stops it on losing leadership.
func NewManager(spec *ManagerSpec) actor.Producer {
	sp := spec.withDefaults()
	return func() actor.Actor {
		return &manager{spec: sp, vols: map[string]*actor.PID{}, dying: map[string]bool{},
			deferred: map[string][]envelope{}, ctrls: map[string]*actor.PID{}, children: map[string]string{},
			creates: map[string]*creating{}, log: sp.Logger}
	}
}

// Phase names the manager's state for the actor tree.
func (m *manager) Phase() string {
	return fmt.Sprintf("%d volumes, %d controllers", len(m.vols), len(m.ctrls))
}

// Receive dispatches. While the manager stops (its children first),
// requests get unavailable and the rest is dropped: a child spawned now
// would never be stopped.
func (m *manager) Receive(ctx actor.Context) {
	if m.stopping {
		m.onStoppingMessage(ctx)
		return
	}
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		m.onStarted(ctx)
	case *messages.VolumeClaimRequest:
		m.onVolumeRequest(ctx, msg.GetVolumeID())
	case *messages.VolumeNodeDetachedRequest:
		m.onVolumeRequest(ctx, msg.GetVolumeID())
	case *messages.VolumeOpRequest:
		m.onOp(ctx, msg)
	case *state.Event:
		m.onEvent(ctx, msg)
	case *submitOp:
		m.onSubmit(ctx, msg)
	case *opResult:
		m.onResult(ctx, msg)
	case *createDone:
		m.onCreated(ctx, msg)
	case *registered:
		m.onRegistered(ctx, msg)
	case *controllerRestarted:
		m.onControllerRestarted(ctx, msg)
	case *actor.Terminated:
		m.onTerminated(ctx, msg.GetWho())
	case *actor.Stopping:
		m.stopping = true
		m.abandonCreates(ctx)
	case *actor.Stopped, *actor.Restarting:
	default:
		m.log.Warn("volume manager: unexpected message", "type", fmt.Sprintf("%T", msg))
	}
}

func (m *manager) onStoppingMessage(ctx actor.Context) {
	msg := ctx.Message()
	if t, ok := msg.(*actor.Terminated); ok {
		name := m.children[t.GetWho().GetId()]
		delete(m.children, t.GetWho().GetId())
		id := strings.TrimPrefix(name, volumePrefix)
		for _, env := range m.deferred[id] {
			m.answer(ctx, env.sender, failure(env.msg, messages.NewError(messages.CodeUnavailable,
				"the volume manager is stopping (leadership lost?)")))
		}
		delete(m.deferred, id)
		return
	}
	if isRequest(msg) && ctx.Sender() != nil {
		ctx.Respond(failure(msg, messages.NewError(messages.CodeUnavailable,
			"the volume manager is stopping (leadership lost?)")))
	}
}

// onStarted rebuilds the actors from the state, as on a new leader: a
// controller actor per plugin whose queue holds the ops that were due
// (pendingOps), and a volume actor per claimed volume, which resumes its
// claims mid-way. The volume actors do not submit again the ops the
// queues were rebuilt with, so none runs twice.
func (m *manager) onStarted(ctx actor.Context) {
	view := m.spec.State()
	byPlugin := map[string][]*messages.CSIVolume{}
	for _, v := range view.CSIVolumes() {
		byPlugin[v.GetPluginID()] = append(byPlugin[v.GetPluginID()], v)
	}
	plugins := map[string]bool{}
	for _, p := range view.CSIPlugins() {
		plugins[p.GetID()] = true
	}
	for id := range byPlugin {
		plugins[id] = true
	}
	queued := map[string]map[string]bool{} // volume ID -> OpKeys queued
	for _, id := range slices.Sorted(maps.Keys(plugins)) {
		ops := pendingOps(byPlugin[id])
		for _, op := range ops {
			if queued[op.GetVolumeID()] == nil {
				queued[op.GetVolumeID()] = map[string]bool{}
			}
			queued[op.GetVolumeID()][opKey(op)] = true
		}
		m.ensureController(ctx, id, ops)
	}
	for _, vols := range byPlugin {
		for _, v := range vols {
			if len(v.GetClaims()) > 0 {
				m.ensureVolume(ctx, v.GetID(), v, queued[v.GetID()])
			}
		}
	}
	m.log.Info("volume manager started", "volumes", len(m.vols), "controllers", len(m.ctrls))
	m.applyRules(ctx, view)
}

// ensureVolume returns the volume actor of id, spawning it if needed; nil
// while its predecessor stops. initial and queued are for a rebuild: the
// volume as pendingOps saw it and the ops already in the controller queue.
func (m *manager) ensureVolume(ctx actor.Context, id string, initial *messages.CSIVolume, queued map[string]bool) *actor.PID {
	if pid, ok := m.vols[id]; ok {
		if m.dying[id] {
			return nil
		}
		return pid
	}
	name := volumePrefix + id
	pid, err := ctx.SpawnNamed(m.spec.props("volume", newVolumeActor(m.spec, id, initial, queued)), name)
	if err != nil {
		m.log.Error("spawn volume actor", "volume", id, "error", err)
		return nil
	}
	m.vols[id], m.children[pid.GetId()] = pid, name
	return pid
}

// ensureController returns the controller actor of a plugin, spawning it
// (with the given queue) if needed.
func (m *manager) ensureController(ctx actor.Context, pluginID string, ops []*messages.ControllerOp) *actor.PID {
	if pid, ok := m.ctrls[pluginID]; ok {
		return pid
	}
	name := controllerPrefix + pluginID
	pid, err := ctx.SpawnNamed(m.spec.props("controller", newControllerActor(m.spec, pluginID, ops)), name)
	if err != nil {
		m.log.Error("spawn controller actor", "plugin", pluginID, "error", err)
		return nil
	}
	m.ctrls[pluginID], m.children[pid.GetId()] = pid, name
	return pid
}

// onVolumeRequest hands a client's or operator's request to the volume's
// actor, or answers not_found for an unknown volume.
func (m *manager) onVolumeRequest(ctx actor.Context, id string) {
	if _, ok := m.vols[id]; !ok && m.spec.State().CSIVolumeAnyNamespace(id) == nil {
		ctx.Respond(failure(ctx.Message(), notFound(id)))
		return
	}
	m.route(ctx, id, envelope{msg: ctx.Message(), sender: ctx.Sender()})
}

// route delivers a message to the volume's actor, or keeps it for the
// successor of an actor that is stopping.
func (m *manager) route(ctx actor.Context, id string, env envelope) {
	if m.dying[id] {
		m.deferred[id] = append(m.deferred[id], env)
		return
	}
	pid := m.ensureVolume(ctx, id, nil, nil)
	if pid == nil {
		if env.sender != nil {
			ctx.Send(env.sender, failure(env.msg, messages.Errorf(messages.CodeInternal,
				"volume %q: no volume actor", id)))
		}
		return
	}
	ctx.RequestWithCustomSender(pid, env.msg, env.sender)
}

func (m *manager) onOp(ctx actor.Context, r *messages.VolumeOpRequest) {
	switch r.GetOp() {
	case opRequestCreate:
		m.onCreate(ctx, r)
	case opRequestDelete, opRequestDeregister, opRequestDetach:
		m.onVolumeRequest(ctx, r.GetVolumeID())
	default:
		ctx.Respond(&messages.VolumeOpResponse{Error: messages.Errorf(messages.CodeInvalid,
			"volume %q: unknown operation %q (want create, delete, detach or deregister)",
			r.GetVolumeID(), r.GetOp())})
	}
}

// onSubmit queues a volume actor's controller op on its plugin's actor.
func (m *manager) onSubmit(ctx actor.Context, s *submitOp) {
	if pid := m.ensureController(ctx, s.Op.GetPluginID(), nil); pid != nil {
		ctx.Send(pid, s)
	}
}

// onResult hands a controller op's outcome to its volume actor. A result
// for a volume whose actor is gone or stopping is dropped.
func (m *manager) onResult(ctx actor.Context, r *opResult) {
	pid, ok := m.vols[r.VolumeID]
	if !ok || m.dying[r.VolumeID] || r.In == nil {
		m.log.Debug("controller result dropped", "volume", r.VolumeID, "input", fmt.Sprintf("%T", r.In))
		return
	}
	ctx.Send(pid, &stepInput{In: r.In})
}

func (m *manager) onControllerRestarted(ctx actor.Context, r *controllerRestarted) {
	for id, c := range m.creates { // their op was in the lost queue
		if c.spec.GetPluginID() == r.PluginID {
			if pid := m.ensureController(ctx, r.PluginID, nil); pid != nil {
				ctx.Send(pid, &submitOp{Op: &messages.ControllerOp{Kind: opCreateVolume, PluginID: r.PluginID, VolumeID: id},
					Volume: c.spec})
			}
		}
	}
	view := m.spec.State()
	for id, pid := range m.vols {
		if !m.dying[id] && view.CSIVolumeAnyNamespace(id).GetPluginID() == r.PluginID {
			ctx.Send(pid, &resubmit{})
		}
	}
}

// onTerminated forgets a stopped child. A volume actor that stopped
// because its volume was gone is spawned again when the volume is back
// (re-registered) and requests wait for it; otherwise they get not_found.
func (m *manager) onTerminated(ctx actor.Context, who *actor.PID) {
	name, ok := m.children[who.GetId()]
	if !ok {
		return
	}
	delete(m.children, who.GetId())
	if id, ok := strings.CutPrefix(name, controllerPrefix); ok {
		delete(m.ctrls, id)
		return
	}
	id := strings.TrimPrefix(name, volumePrefix)
	delete(m.vols, id)
	delete(m.dying, id)
	waiting := m.deferred[id]
	delete(m.deferred, id)
	vol := m.spec.State().CSIVolumeAnyNamespace(id)
	if vol == nil {
		for _, env := range waiting {
			if env.sender != nil {
				ctx.Send(env.sender, failure(env.msg, notFound(id)))
			}
		}
		return
	}
	if len(waiting) > 0 || len(vol.GetClaims()) > 0 {
		m.ensureVolume(ctx, id, nil, nil)
	}
	for _, env := range waiting {
		m.route(ctx, id, env)
	}
}
