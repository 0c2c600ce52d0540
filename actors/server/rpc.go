package server

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/actors/node"
	"github.com/troupe-dev/troupe/actors/scheduler"
	"github.com/troupe-dev/troupe/messages"
)

// rpcTimeout bounds one commit made on behalf of a client or a peer.
const rpcTimeout = 30 * time.Second

// Worker results.
type (
	// nodeRegistered is the result of committing a node registration.
	nodeRegistered struct {
		sender *actor.PID
		nodeID string
		index  uint64
		err    error
	}
	// allocsUpdated is the result of committing a client's updates.
	allocsUpdated struct {
		sender *actor.PID
		resp   *messages.UpdateAllocsResponse
		freed  bool
	}
)

// notLeader is the answer of a server that does not lead.
func (s *Actor) notLeader() *messages.Error {
	return &messages.Error{Code: string(messages.CodeNotLeader), Message: "this server is not the leader", LeaderRPCAddr: s.spec.Leader()}
}

// commit applies cmd through this server's raft, in a worker (ctx: the
// worker's, which ends with the actor).
func (s *Actor) commit(ctx context.Context, cmd *messages.Command) (any, uint64, error) {
	c, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	return s.spec.Raft.Apply(c, cmd)
}

// onApply commits a command a follower forwarded.
func (s *Actor) onApply(ctx actor.Context, m *messages.ApplyRequest) {
	if !s.spec.Raft.IsLeader() {
		ctx.Respond(&messages.ApplyResponse{Error: s.notLeader()})
		return
	}
	actors.Reply(ctx, func(wctx context.Context) any {
		res, index, err := s.commit(wctx, m.GetCommand())
		if err != nil {
			return &messages.ApplyResponse{Error: toError(err)}
		}
		return applyResponse(res, index)
	})
}

// onRegisterNode commits a client's node with the evaluations its
// registration creates, in one raft entry, then lets the node's actor
// answer with the heartbeat TTL. A node registered with another secret is
// refused: nobody takes a node over by registering it again.
func (s *Actor) onRegisterNode(ctx actor.Context, m *messages.RegisterNodeRequest) {
	if !s.spec.Raft.IsLeader() {
		ctx.Respond(&messages.RegisterNodeResponse{Error: s.notLeader()})
		return
	}
	view := s.spec.State()
	if e := registerDenied(view, m.GetNode()); e != nil {
		ctx.Respond(&messages.RegisterNodeResponse{Error: e})
		return
	}
	sender, id := ctx.Sender(), m.GetNode().GetID()
	cmd := registerNode(view, m.GetNode(), s.spec.Clock.Now())
	actors.Go(ctx, func(wctx context.Context) any {
		_, index, err := s.commit(wctx, cmd)
		return &nodeRegistered{sender: sender, nodeID: id, index: index, err: err}
	})
}

func (s *Actor) onNodeRegistered(ctx actor.Context, m *nodeRegistered) {
	if m.err != nil {
		ctx.Send(m.sender, &messages.RegisterNodeResponse{Error: toError(m.err)})
		return
	}
	pid := s.ensureNode(ctx, m.nodeID)
	if pid == nil {
		ctx.Send(m.sender, &messages.RegisterNodeResponse{Error: messages.NewError(messages.CodeInternal, "no node actor")})
		return
	}
	ctx.RequestWithCustomSender(pid, &node.RegisterDone{Index: m.index}, m.sender)
}

// onHeartbeat hands a heartbeat to the node's actor, which answers,
// when it carries the node's secret.
func (s *Actor) onHeartbeat(ctx actor.Context, m *messages.NodeHeartbeat) {
	if !s.spec.Raft.IsLeader() {
		ctx.Respond(&messages.NodeHeartbeatResponse{Error: s.notLeader()})
		return
	}
	pid, ok := s.nodes[m.GetNodeID()]
	n := s.spec.State().NodeByID(m.GetNodeID())
	if !ok || n == nil {
		ctx.Respond(&messages.NodeHeartbeatResponse{Error: &messages.Error{Code: string(messages.CodeNotFound),
			Message: "node " + m.GetNodeID() + " is not registered"}})
		return
	}
	if n.GetSecretID() != m.GetNodeSecretID() {
		ctx.Respond(&messages.NodeHeartbeatResponse{Error: errSecretMismatch(m.GetNodeID())})
		return
	}
	ctx.Forward(pid)
}

// onUpdateAllocs commits a client's batched allocation updates with the
// evaluations they create, when the node's secret matches and the
// allocations are the node's.
func (s *Actor) onUpdateAllocs(ctx actor.Context, m *messages.UpdateAllocsRequest) {
	if !s.spec.Raft.IsLeader() {
		ctx.Respond(&messages.UpdateAllocsResponse{Error: s.notLeader()})
		return
	}
	view := s.spec.State()
	if e := allocUpdatesDenied(view, m); e != nil {
		ctx.Respond(&messages.UpdateAllocsResponse{Error: e})
		return
	}
	sender := ctx.Sender()
	cmd, freed := updateAllocs(view, m.GetAllocs(), s.spec.Clock.Now())
	actors.Go(ctx, func(wctx context.Context) any {
		_, index, err := s.commit(wctx, cmd)
		if err != nil {
			err = fmt.Errorf("server: update allocs: %w", err)
			return &allocsUpdated{sender: sender, resp: &messages.UpdateAllocsResponse{Error: toError(err)}}
		}
		return &allocsUpdated{sender: sender, resp: &messages.UpdateAllocsResponse{Index: index}, freed: freed}
	})
}

// onAllocsUpdated answers the client; allocations that ended freed
// capacity, so blocked evaluations are retried.
func (s *Actor) onAllocsUpdated(ctx actor.Context, m *allocsUpdated) {
	if m.freed && s.sched != nil {
		ctx.Send(s.sched, &scheduler.CapacityChanged{})
	}
	if m.sender != nil {
		ctx.Send(m.sender, m.resp)
	}
}

// onUpsertPlugins commits the CSI plugin instances a client runs.
func (s *Actor) onUpsertPlugins(ctx actor.Context, m *messages.UpsertPluginInstances) {
	if !s.spec.Raft.IsLeader() {
		ctx.Respond(&messages.UpsertPluginInstancesResponse{Error: s.notLeader()})
		return
	}
	if e := nodeSecretDenied(s.spec.State(), m.GetNodeID(), m.GetNodeSecretID()); e != nil {
		ctx.Respond(&messages.UpsertPluginInstancesResponse{Error: e})
		return
	}
	up := proto.Clone(m).(*messages.UpsertPluginInstances)
	up.NodeSecretID = "" // no raft entry holds a secret
	cmd := &messages.Command{Time: s.spec.Clock.Now().UnixNano(),
		Cmd: &messages.Command_UpsertPluginInstances{UpsertPluginInstances: up}}
	actors.Reply(ctx, func(wctx context.Context) any {
		_, index, err := s.commit(wctx, cmd)
		if err != nil {
			return &messages.UpsertPluginInstancesResponse{Error: toError(err)}
		}
		return &messages.UpsertPluginInstancesResponse{Index: index}
	})
}

// onVolumeClaim checks the claiming node's secret (the answer carries the
// volume's secrets), names the claim's node as the volume's plugin knows
// it, then hands the claim to the volume manager.
func (s *Actor) onVolumeClaim(ctx actor.Context, m *messages.VolumeClaimRequest) {
	if s.spec.Raft.IsLeader() && s.volumes != nil {
		view := s.spec.State()
		if e := nodeSecretDenied(view, m.GetClaim().GetNodeID(), m.GetNodeSecretID()); e != nil {
			ctx.Respond(&messages.VolumeClaimResponse{Error: e})
			return
		}
		fillExternalNodeID(view, m)
	}
	s.onVolumeRequest(ctx)
}

// onVolumeNodeDetached hands a client's "node detached" to the volume
// manager when it carries the node's secret: a forged one would let the
// controller detach a volume the node still has mounted.
func (s *Actor) onVolumeNodeDetached(ctx actor.Context, m *messages.VolumeNodeDetachedRequest) {
	if s.spec.Raft.IsLeader() && s.volumes != nil {
		if e := nodeSecretDenied(s.spec.State(), m.GetNodeID(), m.GetNodeSecretID()); e != nil {
			ctx.Respond(&messages.VolumeOpResponse{Error: e})
			return
		}
	}
	s.onVolumeRequest(ctx)
}

// onVolumeRequest hands a volume request to the leader's volume manager,
// which answers the sender.
func (s *Actor) onVolumeRequest(ctx actor.Context) {
	if !s.spec.Raft.IsLeader() || s.volumes == nil {
		e := s.notLeader()
		switch ctx.Message().(type) {
		case *messages.VolumeClaimRequest:
			ctx.Respond(&messages.VolumeClaimResponse{Error: e})
		default:
			ctx.Respond(&messages.VolumeOpResponse{Error: e})
		}
		return
	}
	ctx.Forward(s.volumes)
}
