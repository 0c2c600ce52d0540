package server

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors/volume"
	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/messages"
)

// controllerRPC runs controller RPCs for the leader's controller actors on
// the client actor of the node that hosts the chosen controller instance.
type controllerRPC struct {
	state   func() StateView
	clients ClientLocator
	root    *actor.RootContext
}

var _ volume.ControllerRPC = (*controllerRPC)(nil)

// Run implements volume.ControllerRPC.
func (c *controllerRPC) Run(ctx context.Context, nodeID string, req *messages.ControllerRequest) (*messages.ControllerResponse, error) {
	n := c.state().NodeByID(nodeID)
	if n == nil {
		return nil, fmt.Errorf("%w %q (a controller instance's)", errUnknownNode, nodeID)
	}
	pid, local := c.clients.ClientPID(n)
	if pid == nil {
		return nil, fmt.Errorf("%w: node %q has no RPC address", errNoClient, nodeID)
	}
	if !local && pid.GetAddress() != c.root.ActorSystem().Address() {
		return remote.Request[*messages.ControllerResponse](ctx, c.root, pid.GetAddress(), ClientActorName, req)
	}
	res, err := c.requestLocal(ctx, pid, req)
	if err != nil {
		return nil, fmt.Errorf("server: local client: %w", err)
	}
	resp, ok := res.(*messages.ControllerResponse)
	if !ok {
		return nil, fmt.Errorf("%w to a controller request: %T", errUnexpectedReply, res)
	}
	return resp, nil
}

// requestLocal asks an actor of this process and waits for its answer
// until ctx's deadline, or controllerRPCTimeout without one. An expired
// deadline fails at once: a future whose timeout is 0 or less never
// times out.
func (c *controllerRPC) requestLocal(ctx context.Context, pid *actor.PID, req any) (any, error) {
	d := controllerRPCTimeout
	if dl, ok := ctx.Deadline(); ok {
		if d = time.Until(dl); d <= 0 {
			return nil, context.DeadlineExceeded
		}
	}
	return c.root.RequestFuture(pid, req, d).Result()
}
