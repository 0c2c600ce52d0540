package server

import (
	"errors"
	"time"

	"github.com/troupe-dev/troupe/actors/server/evals"
	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// The raft commands the RPC handlers propose, built from the state the
// leader reads: pure, no I/O.

// registerNode is the one raft entry of a node's registration: the node
// and an evaluation for every system job, so that they land on it.
func registerNode(view StateView, n *messages.Node, now time.Time) *messages.Command {
	return &messages.Command{Time: now.UnixNano(), Cmd: &messages.Command_RegisterNode{RegisterNode: &messages.RegisterNode{
		Node: n, Evals: evals.ForNodeRegistration(view, n.GetID(), now)}}}
}

// updateAllocs is the raft entry of a client's allocation updates with
// the evaluations they create; freed says an allocation ended.
func updateAllocs(view StateView, allocs []*messages.Allocation, now time.Time) (*messages.Command, bool) {
	evs, freed := evals.ForAllocUpdates(view, allocs, now)
	return &messages.Command{Time: now.UnixNano(), Cmd: &messages.Command_UpdateAllocsFromClient{
		UpdateAllocsFromClient: &messages.UpdateAllocsFromClient{Allocs: allocs, Evals: evs}}}, freed
}

// fillExternalNodeID names the claim's node as the volume's plugin knows
// it (NodeGetInfo), for ControllerPublish: the client learns the plugin
// only from the claim's answer, so its first claim carries no such ID.
func fillExternalNodeID(view StateView, m *messages.VolumeClaimRequest) {
	c := m.GetClaim()
	if c == nil || c.GetExternalNodeID() != "" {
		return
	}
	vol := view.CSIVolumeAnyNamespace(m.GetVolumeID())
	if vol == nil {
		return
	}
	if in := view.CSIPluginByID(vol.GetPluginID()).GetNodes()[c.GetNodeID()]; in != nil {
		c.ExternalNodeID = in.GetNodeInfo().GetID()
	}
}

// applyResponse is the answer to a forwarded command: the FSM's result,
// as far as the follower rebuilds it.
func applyResponse(res any, index uint64) *messages.ApplyResponse {
	out := &messages.ApplyResponse{Index: index}
	switch r := res.(type) {
	case *state.RegisterJobResult:
		out.EvalID, out.JobModifyIndex = r.EvalID, r.JobModifyIndex
	case *state.DeregisterJobResult:
		out.EvalID, out.JobModifyIndex = r.EvalID, r.JobModifyIndex
	case *messages.ApplyPlanResult:
		out.PlanResult = r
	}
	return out
}

// toError turns a failed apply into an error message for a peer.
func toError(err error) *messages.Error {
	var re *remote.RemoteError
	switch {
	case errors.As(err, &re):
		return &messages.Error{Code: re.Code, Message: re.Message, LeaderRPCAddr: re.LeaderRPCAddr}
	case errors.Is(err, state.ErrJobNotFound), errors.Is(err, state.ErrNodeNotFound), errors.Is(err, state.ErrAllocNotFound):
		return messages.NewError(messages.CodeNotFound, err.Error())
	case errors.Is(err, state.ErrNodeSecretMismatch):
		return messages.NewError(messages.CodePermissionDenied, err.Error())
	case errors.Is(err, state.ErrJobModifyIndex):
		return messages.NewError(messages.CodeConflict, err.Error())
	case errors.Is(err, state.ErrNamespaceNotFound):
		return messages.NewError(messages.CodeInvalid, err.Error())
	}
	return messages.NewError(messages.CodeInternal, err.Error())
}
