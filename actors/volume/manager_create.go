package volume

import (
	"context"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// opCreateVolume is the ControllerOp kind of an operator's create: it runs
// through the plugin's controller actor like every destructive op, but
// its result goes to the manager, which registers the volume.
const opCreateVolume = string(messages.ControllerCreateVolume)

// creating is a create-volume under way: who asked, and the spec.
type creating struct {
	sender *actor.PID
	spec   *messages.CSIVolume
}

// registered is the commit of a created volume's RegisterVolume.
type registered struct {
	VolumeID string
	Index    uint64
	Err      error
}

// onCreate starts an operator's create: CreateVolume on the plugin's
// controller (serialised with its other ops), then RegisterVolume. A
// volume ID that is registered, or being created, is refused.
func (m *manager) onCreate(ctx actor.Context, r *messages.VolumeOpRequest) {
	spec := proto.Clone(r.GetVolume()).(*messages.CSIVolume)
	if spec == nil {
		spec = &messages.CSIVolume{}
	}
	if spec.ID == "" {
		spec.ID = r.GetVolumeID()
	}
	var refuse *messages.Error
	switch {
	case spec.ID == "" || spec.PluginID == "":
		refuse = messages.Errorf(messages.CodeInvalid,
			"volume create: the spec needs an ID and a plugin ID (ID %q, plugin %q)", spec.ID, spec.PluginID)
	case r.GetVolumeID() != "" && r.GetVolumeID() != spec.ID:
		refuse = messages.Errorf(messages.CodeInvalid,
			"volume create: request for %q carries the spec of %q", r.GetVolumeID(), spec.ID)
	case m.creates[spec.ID] != nil:
		refuse = messages.Errorf(messages.CodeConflict, "volume %q is being created", spec.ID)
	case m.spec.State().CSIVolumeAnyNamespace(spec.ID) != nil:
		refuse = messages.Errorf(messages.CodeConflict, "volume %q already exists", spec.ID)
	case !m.hasController(spec.PluginID):
		// An operator's create does not wait for a controller to appear
		// (a claim's publish does): it would only time out.
		refuse = messages.Errorf(messages.CodeUnavailable,
			"volume create %q: plugin %q has no healthy controller instance on a live node", spec.ID, spec.PluginID)
	}
	if refuse != nil {
		ctx.Respond(&messages.VolumeOpResponse{Error: refuse})
		return
	}
	pid := m.ensureController(ctx, spec.PluginID, nil)
	if pid == nil {
		ctx.Respond(&messages.VolumeOpResponse{Error: messages.Errorf(messages.CodeInternal,
			"volume %q: no controller actor for plugin %q", spec.ID, spec.PluginID)})
		return
	}
	m.creates[spec.ID] = &creating{sender: ctx.Sender(), spec: spec}
	op := &messages.ControllerOp{Kind: opCreateVolume, PluginID: spec.PluginID, VolumeID: spec.ID}
	ctx.Send(pid, &submitOp{Op: op, Volume: spec})
}

// onCreated registers a volume the controller created, with what the
// controller returned (external ID, capacity, context, topologies).
func (m *manager) onCreated(ctx actor.Context, d *createDone) {
	c := m.creates[d.VolumeID]
	if c == nil {
		return
	}
	if d.Err == nil && d.Volume.GetExternalID() == "" {
		d.Err = fmt.Errorf("%w: %s of volume %q: the controller returned no volume ID", errControllerFailed, opCreateVolume, d.VolumeID)
	}
	if d.Err != nil {
		delete(m.creates, d.VolumeID)
		m.answer(ctx, c.sender, &messages.VolumeOpResponse{Error: errorOf(d.Err)})
		return
	}
	vol := proto.Clone(c.spec).(*messages.CSIVolume)
	vol.ExternalID, vol.Capacity = d.Volume.GetExternalID(), d.Volume.GetCapacity()
	if len(d.Volume.GetContext()) > 0 {
		vol.Context = d.Volume.GetContext()
	}
	if len(d.Volume.GetTopologies()) > 0 {
		vol.Topologies = d.Volume.GetTopologies()
	}
	cmd := &messages.Command{Time: m.spec.Clock.Now().UnixNano(),
		Cmd: &messages.Command_RegisterVolume{RegisterVolume: &messages.RegisterVolume{Volume: vol}}}
	prop, id := m.spec.Proposer, d.VolumeID
	actors.Go(ctx, func(life context.Context) any {
		c, cancel := context.WithTimeout(life, proposeTimeout)
		defer cancel()
		_, index, err := prop.Apply(c, cmd)
		return &registered{VolumeID: id, Index: index, Err: err}
	})
}

// onRegistered answers the create with the stored volume.
func (m *manager) onRegistered(ctx actor.Context, r *registered) {
	c := m.creates[r.VolumeID]
	delete(m.creates, r.VolumeID)
	if c == nil {
		return
	}
	if r.Err != nil {
		m.log.Error("registering a created volume failed", "volume", r.VolumeID, "error", r.Err)
		m.answer(ctx, c.sender, &messages.VolumeOpResponse{Error: errorOf(r.Err)})
		return
	}
	m.log.Info("volume created", "volume", r.VolumeID, "index", r.Index)
	m.answer(ctx, c.sender, &messages.VolumeOpResponse{Index: r.Index,
		Volume: m.spec.State().CSIVolumeAnyNamespace(r.VolumeID)})
}

func (m *manager) answer(ctx actor.Context, to *actor.PID, msg any) {
	if to != nil {
		ctx.Send(to, msg)
	}
}

// hasController reports whether the plugin has a healthy controller
// instance on a live node: one that the controller actor's router could
// pick.
func (m *manager) hasController(pluginID string) bool {
	st := m.spec.State()
	return len((&router{}).candidates(controllerInstances(st.CSIPluginByID(pluginID)), liveNodes(st.Nodes()))) > 0
}

// abandonCreates answers the creates still under way when the manager
// stops (leadership lost): the operator may try again on the new leader,
// where the ID is free unless the create had committed.
func (m *manager) abandonCreates(ctx actor.Context) {
	for id, c := range m.creates {
		m.answer(ctx, c.sender, &messages.VolumeOpResponse{Error: messages.Errorf(messages.CodeUnavailable,
			"volume create %q: the volume manager stopped (leadership lost?) before it finished", id)})
	}
	clear(m.creates)
}
