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
func Dial(ctx context.Context, root *actor.RootContext, addr, name, region string) (*Conn, error) {
	in := newPipe()
	c := newConn(root, in)
	c.self = root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &end{in: in} }))
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
	return c, nil
}
