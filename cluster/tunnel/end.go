package tunnel

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// end is the actor of one end of a tunnel: it queues the peer's bytes in
// order for its Conn's reader, takes the peer's credit for its Conn's
// writer, watches the peer, and keeps the tunnel alive: it pings the peer
// every keepalive interval and breaks the tunnel when it heard nothing
// from it for the keepalive timeout.
type end struct {
	in    *pipe
	out   *credit
	set   settings
	name  string     // the peer in errors: `region "eu"`, or its address
	peer  *actor.PID // nil on the dialing end until the listener answers
	next  uint64     // the Seq of the last TunnelData queued
	heard time.Time  // when the peer was last heard from
	timer actors.Timer
}

// watchPeer tells the dialing end which actor the listener gave it.
type watchPeer struct{ pid *actor.PID }

// keepaliveTick is the keepalive timer firing.
type keepaliveTick struct{}

// Receive dispatches.
func (e *end) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		e.onStarted(ctx)
	case *watchPeer:
		e.peer = m.pid
		e.watch(ctx, m.pid)
	case *messages.TunnelData:
		e.hear()
		e.onData(m)
	case *messages.TunnelCredit:
		e.hear()
		e.out.grant(int(m.GetBytes()))
	case *messages.TunnelPing:
		e.hear()
	case *messages.TunnelClosed:
		e.hear()
		e.onClosed(m)
	case keepaliveTick:
		e.onTick(ctx)
	case *actor.Terminated:
		if e.peer != nil && m.GetWho().Equal(e.peer) {
			e.fail(fmt.Errorf("%w: %s", ErrBroken, e.name))
		}
	case *actor.Stopping:
		if e.timer != nil {
			e.timer.Stop()
		}
		e.fail(ErrBroken) // a no-op after Close, which closed it first
	}
}

func (e *end) onStarted(ctx actor.Context) {
	e.watch(ctx, e.peer)
	e.hear()
	e.arm(ctx)
}

func (e *end) watch(ctx actor.Context, pid *actor.PID) {
	if pid != nil {
		ctx.Watch(pid)
	}
}

func (e *end) hear() { e.heard = e.set.clock.Now() }

// arm sets the keepalive timer (a message to self).
func (e *end) arm(ctx actor.Context) {
	root, self := ctx.ActorSystem().Root, ctx.Self()
	e.timer = e.set.clock.AfterFunc(e.set.keepaliveInterval, func() { root.Send(self, keepaliveTick{}) })
}

// onTick breaks the tunnel when the peer was silent for the timeout, and
// pings it otherwise (before it re-arms: tests rely on the order).
func (e *end) onTick(ctx actor.Context) {
	if silent := e.set.clock.Now().Sub(e.heard); silent >= e.set.keepaliveTimeout {
		e.fail(fmt.Errorf("%w: no answer from %s for %s", ErrNoAnswer, e.name, silent.Round(time.Millisecond)))
		return
	}
	if e.peer != nil {
		ctx.Send(e.peer, &messages.TunnelPing{})
	}
	e.arm(ctx)
}

// fail ends both directions with err: reads return it once the queue is
// drained, writes at once.
func (e *end) fail(err error) {
	e.in.close(err)
	e.out.close(err)
}

func (e *end) onData(m *messages.TunnelData) {
	e.next++
	if m.GetSeq() != e.next {
		e.fail(fmt.Errorf("%w: got %d, want %d", ErrOutOfOrder, m.GetSeq(), e.next))
		return
	}
	e.in.push(m.GetData())
	if err := e.in.broken(); err != nil {
		e.out.close(err) // an overrun
	}
}

func (e *end) onClosed(m *messages.TunnelClosed) {
	if m.GetError() != "" {
		e.fail(fmt.Errorf("%w: %s: %s", ErrBroken, e.name, m.GetError()))
		return
	}
	e.in.close(nil) // io.EOF; the peer still reads what this end writes
}
