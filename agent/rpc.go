package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/actors/node"
	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// rpcTimeout bounds one server call made on behalf of a remote peer.
const rpcTimeout = 30 * time.Second

// notLeader is the answer of a server that does not lead.
func (a *Agent) notLeader() *messages.Error {
	return &messages.Error{Code: remote.CodeNotLeader, Message: "this server is not the leader", LeaderRPCAddr: a.leaderRPCAddr()}
}

// toError turns a failed apply into an error message for a peer.
func toError(err error) *messages.Error {
	var re *remote.RemoteError
	switch {
	case errors.As(err, &re):
		return &messages.Error{Code: re.Code, Message: re.Message, LeaderRPCAddr: re.LeaderRPCAddr}
	case errors.Is(err, state.ErrJobNotFound), errors.Is(err, state.ErrNodeNotFound), errors.Is(err, state.ErrAllocNotFound):
		return &messages.Error{Code: remote.CodeNotFound, Message: err.Error()}
	case errors.Is(err, state.ErrJobModifyIndex):
		return &messages.Error{Code: remote.CodeConflict, Message: err.Error()}
	}
	return &messages.Error{Code: remote.CodeInternal, Message: err.Error()}
}

// onApply commits a command a follower forwarded.
func (s *serverActor) onApply(ctx actor.Context, m *messages.ApplyRequest) {
	a := s.a
	if !a.raft.IsLeader() {
		ctx.Respond(&messages.ApplyResponse{Error: a.notLeader()})
		return
	}
	actors.Reply(ctx, func() any {
		c, cancel := context.WithTimeout(context.Background(), rpcTimeout)
		defer cancel()
		res, index, err := a.raft.Apply(c, m.GetCommand())
		if err != nil {
			return &messages.ApplyResponse{Error: toError(err)}
		}
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
	})
}

// forwardApply sends a command to the leader and rebuilds the FSM's answer.
func (a *Agent) forwardApply(ctx context.Context, cmd *messages.Command) (any, uint64, error) {
	addr := a.leaderRPCAddr()
	if addr == "" {
		return nil, 0, ErrNoLeader
	}
	resp, err := remote.Request[*messages.ApplyResponse](ctx, a.sys.Root, addr, "server", &messages.ApplyRequest{Command: cmd})
	if err != nil {
		return nil, 0, fmt.Errorf("agent: forward to leader %s: %w", addr, err)
	}
	// Read your writes: answer once this server's replica has applied the
	// entry, whatever tables it touched (maybe none).
	a.waitApplied(ctx, resp.Index)
	switch cmd.GetCmd().(type) {
	case *messages.Command_RegisterJob:
		return &state.RegisterJobResult{Index: resp.Index, JobModifyIndex: resp.JobModifyIndex, EvalID: resp.EvalID}, resp.Index, nil
	case *messages.Command_DeregisterJob:
		return &state.DeregisterJobResult{Index: resp.Index, JobModifyIndex: resp.JobModifyIndex, EvalID: resp.EvalID}, resp.Index, nil
	case *messages.Command_ApplyPlan:
		return resp.PlanResult, resp.Index, nil
	}
	return nil, resp.Index, nil
}

// appliedWait bounds how long a server that forwarded a write waits for
// its own replica to apply it before answering (tests shrink it).
var appliedWait = 5 * time.Second

// waitApplied waits, at most appliedWait, until this server's replica has
// applied the raft entry at index, which the leader committed. The write
// is answered as done either way: it is committed, and an error would make
// a client write it again (a server cut off from the leader just after
// forwarding would otherwise hold the answer for ever). A client-only
// agent, with no replica, does not wait.
func (a *Agent) waitApplied(ctx context.Context, index uint64) {
	if a.store == nil || index == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, appliedWait)
	defer cancel()
	if err := a.store.WaitApplied(ctx, index); err != nil {
		a.log.Warn("answering a forwarded write this server has not applied yet", "index", index,
			"applied", a.store.AppliedIndex(), "error", err)
	}
}

// onRegisterNode commits a client's node, then lets the node's actor answer
// with the heartbeat TTL.
func (s *serverActor) onRegisterNode(ctx actor.Context, m *messages.RegisterNodeRequest) {
	a := s.a
	if !a.raft.IsLeader() {
		ctx.Respond(&messages.RegisterNodeResponse{Error: a.notLeader()})
		return
	}
	sender := ctx.Sender()
	actors.Go(ctx, func() any {
		c, cancel := context.WithTimeout(context.Background(), rpcTimeout)
		defer cancel()
		index, err := a.registerNode(c, m.GetNode())
		return &nodeRegistered{sender: sender, nodeID: m.GetNode().GetID(), index: index, err: err}
	})
}

// nodeRegistered is the result of committing a node registration.
type nodeRegistered struct {
	sender *actor.PID
	nodeID string
	index  uint64
	err    error
}

func (s *serverActor) onNodeRegistered(ctx actor.Context, m *nodeRegistered) {
	if m.err != nil {
		ctx.Send(m.sender, &messages.RegisterNodeResponse{Error: toError(m.err)})
		return
	}
	pid := s.ensureNode(ctx, m.nodeID)
	if pid == nil {
		ctx.Send(m.sender, &messages.RegisterNodeResponse{Error: &messages.Error{Code: remote.CodeInternal, Message: "no node actor"}})
		return
	}
	ctx.RequestWithCustomSender(pid, &node.RegisterDone{Index: m.index}, m.sender)
}

// onHeartbeat hands a heartbeat to the node's actor, which answers.
func (s *serverActor) onHeartbeat(ctx actor.Context, m *messages.NodeHeartbeat) {
	if !s.a.raft.IsLeader() {
		ctx.Respond(&messages.NodeHeartbeatResponse{Error: s.a.notLeader()})
		return
	}
	pid, ok := s.nodes[m.GetNodeID()]
	if !ok || s.a.store.Snapshot().NodeByID(m.GetNodeID()) == nil {
		ctx.Respond(&messages.NodeHeartbeatResponse{Error: &messages.Error{Code: remote.CodeNotFound,
			Message: "node " + m.GetNodeID() + " is not registered"}})
		return
	}
	ctx.Forward(pid)
}

// onUpdateAllocs commits a client's batched allocation updates.
func (s *serverActor) onUpdateAllocs(ctx actor.Context, m *messages.UpdateAllocsRequest) {
	a := s.a
	if !a.raft.IsLeader() {
		ctx.Respond(&messages.UpdateAllocsResponse{Error: a.notLeader()})
		return
	}
	actors.Reply(ctx, func() any {
		c, cancel := context.WithTimeout(context.Background(), rpcTimeout)
		defer cancel()
		index, err := a.updateAllocs(c, m.GetAllocs())
		if err != nil {
			return &messages.UpdateAllocsResponse{Error: toError(err)}
		}
		return &messages.UpdateAllocsResponse{Index: index}
	})
}

// agentActor ("agent") runs on every agent and answers questions about
// the agent itself, such as its actor tree, for remote callers.
type agentActor struct{ a *Agent }

// Receive dispatches.
func (g *agentActor) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *messages.GetActorTree:
		ctx.Respond(g.a.actorTreeMessage())
	}
}

// actorTreeMessage is this agent's live actor tree as a message.
func (a *Agent) actorTreeMessage() *messages.ActorTreeResponse {
	out := &messages.ActorTreeResponse{}
	out.Node = a.local.nodeID // fixed before the actors start; a.node comes later
	for _, in := range a.sys.Tree() {
		out.Actors = append(out.Actors, &messages.ActorInfo{Path: in.Path, Kind: in.Kind, Parent: in.Parent,
			Children: in.Children, Phase: in.Phase, MailboxLen: int32(in.MailboxLen), Restarts: int32(in.Restarts),
			LastMessage: in.LastMessage, LastMessageAt: in.LastMessageAt, Messages: in.Messages})
	}
	return out
}

// onUpsertPlugins commits the CSI plugin instances a client runs.
func (s *serverActor) onUpsertPlugins(ctx actor.Context, m *messages.UpsertPluginInstances) {
	a := s.a
	if !a.raft.IsLeader() {
		ctx.Respond(&messages.UpsertPluginInstancesResponse{Error: a.notLeader()})
		return
	}
	actors.Reply(ctx, func() any {
		c, cancel := context.WithTimeout(context.Background(), rpcTimeout)
		defer cancel()
		_, index, err := a.raft.Apply(c, &messages.Command{Cmd: &messages.Command_UpsertPluginInstances{UpsertPluginInstances: m}})
		if err != nil {
			return &messages.UpsertPluginInstancesResponse{Error: toError(err)}
		}
		return &messages.UpsertPluginInstancesResponse{Index: index}
	})
}
