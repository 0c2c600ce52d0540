package actors

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"
)

// Work is what a worker runs: fn(ctx) gets the actor's lifetime context
// (Lifetime), cancelled when the actor stops, and returns the message to
// send back (nil: none). The form without a context is for callers not
// converted yet (the agent's RPC actor); it gets no lifetime.
type Work interface {
	func(context.Context) any | func() any
}

// Go runs fn outside the actor's mailbox and sends its result back to the
// actor as a message. It is how actors make blocking calls (raft applies,
// driver and plugin calls) without stalling their mailbox. fn gets the
// actor's lifetime context and must end when it is cancelled; a result
// for an actor that has stopped meanwhile goes to dead letters.
func Go[F Work](ctx actor.Context, fn F) {
	self := ctx.Self()
	root := ctx.ActorSystem().Root
	run := bind(ctx, fn)
	go func() {
		if msg := run(); msg != nil {
			root.Send(self, msg)
		}
	}()
}

// Reply runs fn outside the actor's mailbox and sends its result to the
// sender of the message being handled (a request from another actor, a
// future, or a remote peer), so an actor answers a slow request without
// blocking. fn gets the actor's lifetime context, as with Go.
func Reply[F Work](ctx actor.Context, fn F) {
	sender := ctx.Sender()
	root := ctx.ActorSystem().Root
	run := bind(ctx, fn)
	go func() {
		if msg := run(); msg != nil && sender != nil {
			root.Send(sender, msg)
		}
	}()
}

// bind gives fn the lifetime context of ctx's actor, read on the actor's
// goroutine.
func bind[F Work](ctx actor.Context, fn F) func() any {
	switch f := any(fn).(type) {
	case func(context.Context) any:
		c := lifetimeOf(ctx).Context()
		return func() any { return f(c) }
	case func() any:
		return f
	}
	panic("unreachable")
}

// AllocReleased tells a client actor that an allocation actor has let go
// of everything it held on the host (tasks, volumes, network): from then
// on its local state may be dropped, once the servers no longer list it.
type AllocReleased struct{ AllocID string }
