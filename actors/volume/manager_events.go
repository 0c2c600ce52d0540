package volume

import (
	"maps"
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// onEvent routes what the FSM applied: volume changes to the volume
// actors, plugin and node changes to the controller actors; then it
// applies the claim rules to every volume in use.
func (m *manager) onEvent(ctx actor.Context, ev *state.Event) {
	view := m.spec.State()
	for _, id := range ev.VolumesChanged {
		m.volumeChanged(ctx, id, view.CSIVolumeAnyNamespace(id))
	}
	for _, id := range ev.PluginsChanged {
		pid := m.ctrls[id]
		if pid == nil && view.CSIPluginByID(id) != nil {
			pid = m.ensureController(ctx, id, nil)
		}
		if pid != nil {
			ctx.Send(pid, &instancesChanged{})
		}
	}
	if len(ev.NodeUpdated)+len(ev.NodesDeleted) > 0 {
		for _, id := range slices.Sorted(maps.Keys(m.ctrls)) {
			if !slices.Contains(ev.PluginsChanged, id) {
				ctx.Send(m.ctrls[id], &instancesChanged{})
			}
		}
	}
	m.applyRules(ctx, view)
}

// volumeChanged passes the stored volume to its actor, or tells the actor
// to stop when the volume is gone.
func (m *manager) volumeChanged(ctx actor.Context, id string, vol *messages.CSIVolume) {
	pid, ok := m.vols[id]
	switch {
	case ok && m.dying[id]:
		// its successor reads the state when it starts
	case ok && vol == nil:
		m.dying[id] = true
		ctx.Send(pid, &volumeGone{})
	case ok:
		ctx.Send(pid, &stepInput{In: volumeUpdated{Volume: vol}})
	case vol != nil && len(vol.GetClaims()) > 0:
		m.ensureVolume(ctx, id, nil, nil)
	}
}

// applyRules steps the claims whose allocation or node moved on: a
// released claim starts unpublishing, an abandoned node plugin goes
// straight to the controller step (claimRule). Only volumes with an actor
// can have claims, so the scan is over those.
func (m *manager) applyRules(ctx actor.Context, view StateView) {
	for _, id := range slices.Sorted(maps.Keys(m.vols)) {
		if m.dying[id] {
			continue
		}
		vol := view.CSIVolumeAnyNamespace(id)
		for _, c := range vol.GetClaims() {
			in := claimRule(c, view.AllocByID(c.GetAllocationID()), view.NodeByID(c.GetNodeID()))
			if in != nil {
				ctx.Send(m.vols[id], &stepInput{In: in})
			}
		}
	}
}

// claimRule is what the leader does about a stored claim given its
// allocation and node (nil when they are gone), or nil for nothing:
//
//   - nodeAbandoned for a claim taken or unpublishing whose node is down
//     or gone, whose allocation is gone (garbage-collected), or whose
//     allocation is lost with its node down or disconnected (past the
//     group's stop_on_client_after window): nobody will report the node
//     unpublish, so the claim goes straight to the controller step;
//   - releaseRequested for a taken claim whose allocation is
//     client-terminal: the claim starts unpublishing and waits for the
//     node's report.
func claimRule(c *messages.CSIVolumeClaim, alloc *messages.Allocation, node *messages.Node) input {
	st := c.ClaimState()
	if st != state.ClaimTaken && st != state.ClaimUnpublishing {
		return nil
	}
	down := node == nil || node.GetStatus() == messages.NodeStatusDown
	cutOff := down || node.GetStatus() == messages.NodeStatusDisconnected
	if down || alloc == nil || (alloc.GetClientStatus() == messages.AllocClientStatusLost && cutOff) {
		return nodeAbandoned{AllocID: c.GetAllocationID()}
	}
	if st == state.ClaimTaken && alloc.ClientTerminalStatus() {
		return releaseRequested{AllocID: c.GetAllocationID()}
	}
	return nil
}

// detachInputs is what an operator's detach of a volume from nodeID steps:
// for each claim on the node whose allocation is terminal or gone,
// nodeAbandoned when the node is down or gone, else releaseRequested (a
// claim already unpublishing on a live node waits for its report); a
// RetryDue for each claim waiting in node-detached (its controller
// unpublish is tried again now); then Resume, which re-drives the claims
// mid-way.
func detachInputs(vol *messages.CSIVolume, nodeID string, view StateView) []input {
	node := view.NodeByID(nodeID)
	down := node == nil || node.GetStatus() == messages.NodeStatusDown
	var out []input
	for _, c := range vol.GetClaims() {
		if c.GetNodeID() != nodeID {
			continue
		}
		alloc := view.AllocByID(c.GetAllocationID())
		terminal := alloc == nil || alloc.ClientTerminalStatus()
		switch st := c.ClaimState(); {
		case st == state.ClaimNodeDetached:
			out = append(out, RetryDue{AllocID: c.GetAllocationID()})
		case !terminal || (st != state.ClaimTaken && st != state.ClaimUnpublishing):
		case down:
			out = append(out, nodeAbandoned{AllocID: c.GetAllocationID()})
		case st == state.ClaimTaken:
			out = append(out, releaseRequested{AllocID: c.GetAllocationID()})
		}
	}
	return append(out, resume{})
}
