package tunnel

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/messages"
)

// DialFunc connects a new tunnel to what it serves (the agent's own HTTP
// API); ctx ends with the listener.
type DialFunc func(ctx context.Context) (net.Conn, error)

// Listener returns the props of the actor that accepts tunnels for
// region, connecting each to what dial returns.
func Listener(region string, dial DialFunc, log *slog.Logger, opts ...Option) *actor.Props {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	set := newSettings(opts)
	return actor.PropsFromProducer(func() actor.Actor { return &listener{region: region, dial: dial, log: log, set: set} })
}

// listener answers OpenTunnel; it owns the goroutines that copy between
// its tunnels and their connections, and stops them when it stops.
type listener struct {
	region string
	dial   DialFunc
	log    *slog.Logger
	set    settings
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Receive dispatches.
func (l *listener) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		l.ctx, l.cancel = context.WithCancel(context.Background())
	case *messages.OpenTunnel:
		l.onOpen(ctx, m)
	case *actor.Stopping:
		l.cancel()
		l.wg.Wait()
	}
}

func (l *listener) onOpen(ctx actor.Context, m *messages.OpenTunnel) {
	if m.GetRegion() != "" && m.GetRegion() != l.region {
		ctx.Respond(&messages.OpenTunnelResponse{Error: &messages.Error{Code: string(messages.CodeInvalid),
			Message: "this server is in region " + l.region + ", not " + m.GetRegion()}})
		return
	}
	peer := actor.NewPID(m.GetReplyAddress(), m.GetReplyID())
	c := newConn(ctx.ActorSystem().Root, l.set)
	c.peer = peer
	c.self = ctx.Spawn(c.props("the peer at "+peer.GetAddress(), peer))
	ctx.Respond(&messages.OpenTunnelResponse{Address: c.self.GetAddress(), ID: c.self.GetId()})
	c.open()
	l.wg.Add(1)
	go l.serve(c)
}

// serve connects c to a new connection and copies both ways until the
// dialer closes (or goes away), or the listener stops.
func (l *listener) serve(c *Conn) {
	defer l.wg.Done()
	conn, err := l.dial(l.ctx)
	if err != nil {
		l.log.Warn("tunnel: cannot connect a tunnel", "error", err)
		_ = c.fail(err.Error())
		return
	}
	stop := context.AfterFunc(l.ctx, func() { _ = conn.Close(); _ = c.Close() })
	defer stop()
	done := make(chan struct{})
	go func() { // the answer: until the connection ends, then half-close
		defer close(done)
		_, _ = io.Copy(c, conn)
		_ = c.CloseWrite()
	}()
	// The request: until the dialer closes or goes away. Only then does
	// this end stop, so that the peer never sees it go before the last
	// bytes it sent.
	_, _ = io.Copy(conn, c)
	_ = conn.Close()
	<-done
	_ = c.Close()
}
