package tunnel

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/messages"
)

// end is the actor of one end of a tunnel: it queues the peer's bytes in
// order for its Conn's reader and watches the peer.
type end struct {
	in   *pipe
	peer *actor.PID // nil on the dialing end until the listener answers
	next uint64     // the Seq of the last TunnelData queued
}

// watchPeer tells the dialing end which actor the listener gave it.
type watchPeer struct{ pid *actor.PID }

// Receive dispatches.
func (e *end) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		e.watch(ctx, e.peer)
	case *watchPeer:
		e.peer = m.pid
		e.watch(ctx, m.pid)
	case *messages.TunnelData:
		e.onData(m)
	case *messages.TunnelClosed:
		e.onClosed(m)
	case *actor.Terminated:
		if e.peer != nil && m.GetWho().Equal(e.peer) {
			e.in.close(ErrBroken)
		}
	case *actor.Stopping:
		e.in.close(ErrBroken) // a no-op after Close, which closed it first
	}
}

func (e *end) watch(ctx actor.Context, pid *actor.PID) {
	if pid != nil {
		ctx.Watch(pid)
	}
}

func (e *end) onData(m *messages.TunnelData) {
	e.next++
	if m.GetSeq() != e.next {
		e.in.close(fmt.Errorf("%w: got %d, want %d", ErrOutOfOrder, m.GetSeq(), e.next))
		return
	}
	e.in.push(m.GetData())
}

func (e *end) onClosed(m *messages.TunnelClosed) {
	if m.GetError() != "" {
		e.in.close(fmt.Errorf("%w: %s", ErrBroken, m.GetError()))
		return
	}
	e.in.close(nil) // io.EOF
}
