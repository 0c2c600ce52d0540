package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/actors/volume"
	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/messages"
)

// startVolumes spawns the leader's volume manager (server/volumes): the
// volume actors and the controller actors, rebuilt from the replicated
// state.
func (s *serverActor) startVolumes(ctx actor.Context) {
	a := s.a
	spec := &volume.ManagerSpec{
		State:       func() volume.StateView { return a.store.Snapshot() },
		Proposer:    a,
		Controllers: &controllerRPC{a: a},
		Clock:       a.clock,
		Retry:       a.cfg.VolumeRetry,
		Registry:    a.sys.Registry,
		Logger:      a.log.With("actor", "volumes"),
		// Longer than a client's own bound on the plugin call, so the
		// leader gives up only on a client that does not answer at all.
		RPCTimeout: controllerRPCTimeout,
	}
	pid, err := ctx.SpawnNamed(a.sys.Props("volumes", volume.NewManager(spec),
		actor.WithSupervisor(actors.DefaultSupervision.Strategy())), "volumes")
	if err != nil {
		a.log.Error("spawn volume manager", "error", err)
		return
	}
	s.volumes = pid
}

// onVolumeRequest hands a volume request to the leader's volume manager,
// which answers the sender.
func (s *serverActor) onVolumeRequest(ctx actor.Context) {
	if !s.a.raft.IsLeader() || s.volumes == nil {
		e := s.a.notLeader()
		switch ctx.Message().(type) {
		case *messages.VolumeClaimRequest:
			ctx.Respond(&messages.VolumeClaimResponse{Error: e})
		default:
			ctx.Respond(&messages.VolumeOpResponse{Error: e})
		}
		return
	}
	if m, ok := ctx.Message().(*messages.VolumeClaimRequest); ok {
		s.a.fillExternalNodeID(m)
	}
	ctx.Forward(s.volumes)
}

// fillExternalNodeID names the claim's node as the volume's plugin knows
// it (NodeGetInfo), for ControllerPublish: the client learns the plugin
// only from the claim's answer, so its first claim carries no such ID.
func (a *Agent) fillExternalNodeID(m *messages.VolumeClaimRequest) {
	c := m.GetClaim()
	if c == nil || c.GetExternalNodeID() != "" {
		return
	}
	snap := a.store.Snapshot()
	vol := snap.CSIVolumeAnyNamespace(m.GetVolumeID())
	if vol == nil {
		return
	}
	if in := snap.CSIPluginByID(vol.GetPluginID()).GetNodes()[c.GetNodeID()]; in != nil {
		c.ExternalNodeID = in.GetNodeInfo().GetID()
	}
}

// controllerRPCTimeout bounds a controller RPC on the leader: longer than
// the client's bound on the plugin call (node.ClientSpec, 2 min), so a slow
// attach is never taken for an unreachable instance and sent again while
// it still runs.
const controllerRPCTimeout = 150 * time.Second

// volumeOpTimeout bounds an operator's volume request end to end.
const volumeOpTimeout = 3 * time.Minute

// controllerRPC runs controller RPCs for the leader's controller actors on
// the client actor of the node that hosts the chosen controller instance.
type controllerRPC struct{ a *Agent }

// Run implements volume.ControllerRPC.
func (c *controllerRPC) Run(ctx context.Context, nodeID string, req *messages.ControllerRequest) (*messages.ControllerResponse, error) {
	n := c.a.store.Snapshot().NodeByID(nodeID)
	if n == nil {
		return nil, fmt.Errorf("agent: controller instance on unknown node %q", nodeID)
	}
	pid := c.a.clientPIDFor(n)
	if pid == nil {
		return nil, fmt.Errorf("agent: node %q has no RPC address", nodeID)
	}
	if pid.GetAddress() == c.a.sys.ActorSystem.Address() || pid == c.a.local.pid {
		res, err := c.a.requestLocal(ctx, pid, req, controllerRPCTimeout)
		if err != nil {
			return nil, fmt.Errorf("agent: local client: %w", err)
		}
		resp, ok := res.(*messages.ControllerResponse)
		if !ok {
			return nil, fmt.Errorf("agent: controller request: unexpected reply %T", res)
		}
		return resp, nil
	}
	return remote.Request[*messages.ControllerResponse](ctx, c.a.sys.Root, pid.GetAddress(), "client", req)
}

// VolumeOp sends an operator's volume request (create, delete, detach,
// deregister) to the leader's volume manager.
func (a *Agent) VolumeOp(ctx context.Context, req *messages.VolumeOpRequest) (*messages.VolumeOpResponse, error) {
	// create and delete wait for the plugin's controller, which may take
	// minutes (a create from a snapshot): do not give up at the default.
	ctx, cancel := context.WithTimeout(ctx, volumeOpTimeout)
	defer cancel()
	resp, err := a.conn.call(ctx, req)
	if r, ok := resp.(*messages.VolumeOpResponse); ok && r.GetError() != nil {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	r, ok := resp.(*messages.VolumeOpResponse)
	if !ok {
		return nil, fmt.Errorf("agent: volume %s: unexpected reply %T", req.GetOp(), resp)
	}
	// Read your writes on a follower too: its replica has the change.
	a.waitApplied(ctx, r.GetIndex())
	return r, nil
}

// Claim implements alloc.VolumeClaimer.
func (c *serverConn) Claim(ctx context.Context, req *messages.VolumeClaimRequest) (*messages.VolumeClaimResponse, error) {
	resp, err := c.call(ctx, req)
	if err != nil {
		return nil, err
	}
	r, ok := resp.(*messages.VolumeClaimResponse)
	if !ok {
		return nil, fmt.Errorf("agent: claim: unexpected reply %T", resp)
	}
	return r, nil
}

// NodeDetached implements alloc.VolumeClaimer.
func (c *serverConn) NodeDetached(ctx context.Context, req *messages.VolumeNodeDetachedRequest) error {
	_, err := c.call(ctx, req)
	return err
}
