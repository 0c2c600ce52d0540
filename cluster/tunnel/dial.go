package tunnel

import (
	"context"
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/messages"
)

// Dial opens a tunnel to the listener actor named name at the agent whose
// RPC address is addr, which must be in region ("" skips the check). It
// waits at most until ctx's deadline (else the transport's request
// timeout) for the listener's answer. A refusal wraps ErrRefused.
func Dial(ctx context.Context, root *actor.RootContext, addr, name, region string, opts ...Option) (*Conn, error) {
	c := newConn(root, newSettings(opts))
	peerName := "the server at " + addr
	if region != "" {
		peerName = fmt.Sprintf("region %q (server %s)", region, addr)
	}
	c.self = root.Spawn(c.props(peerName, nil))
	resp, err := remote.Request[*messages.OpenTunnelResponse](ctx, root, addr, name,
		&messages.OpenTunnel{ReplyAddress: c.self.GetAddress(), ReplyID: c.self.GetId(), Region: region})
	if err != nil {
		root.Stop(c.self)
		var re *remote.RemoteError
		if errors.As(err, &re) {
			return nil, fmt.Errorf("%w: %w", ErrRefused, err)
		}
		return nil, err
	}
	c.peer = actor.NewPID(resp.GetAddress(), resp.GetID())
	root.Send(c.self, &watchPeer{pid: c.peer})
	c.open()
	return c, nil
}
