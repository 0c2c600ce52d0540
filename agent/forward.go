package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// forwardApply sends a command to the leader at RPC address addr and
// rebuilds the FSM's answer.
func (a *Agent) forwardApply(ctx context.Context, addr string, cmd *messages.Command) (any, uint64, error) {
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

// undelivered says whether a forward failed before the leader's server
// actor had the command, so that sending it again cannot apply it twice:
// the transport dead-lettered it, the leader being unreachable (killed,
// before raft here noticed) or without a server actor. A timeout says
// nothing of the kind: the leader may have committed it.
func undelivered(err error) bool {
	return errors.Is(err, remote.ErrNoActor) ||
		(errors.Is(err, remote.ErrUnreachable) && errors.Is(err, actor.ErrDeadLetter))
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

// agentActor ("agent") runs on every agent and answers questions about
// the agent itself, such as its actor tree, for remote callers.
type agentActor struct{ a *Agent }

// Receive dispatches.
func (g *agentActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.GetActorTree:
		ctx.Respond(g.a.actorTreeMessage())
	case *messages.ReplicateACLs:
		ctx.Respond(g.a.answerReplicateACLs(m)) // acl_replication.go
	case *messages.MultiregionDeploymentQuery:
		ctx.Respond(g.a.answerMultiregionDeployment(m)) // multiregion_rollout.go
	}
}

// actorTreeMessage is this agent's live actor tree as a message.
func (a *Agent) actorTreeMessage() *messages.ActorTreeResponse {
	out := &messages.ActorTreeResponse{}
	out.Node = a.local.LocalNodeID // fixed before the actors start; a.node comes later
	for _, in := range a.sys.Tree() {
		out.Actors = append(out.Actors, &messages.ActorInfo{Path: in.Path, Kind: in.Kind, Parent: in.Parent,
			Children: in.Children, Phase: in.Phase, MailboxLen: int32(in.MailboxLen), Restarts: int32(in.Restarts),
			LastMessage: in.LastMessage, LastMessageAt: in.LastMessageAt, Messages: in.Messages})
	}
	return out
}
