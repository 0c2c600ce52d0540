package actors

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"
)

// Go runs fn outside the actor's mailbox and sends its result back to the
// actor as a message. It is how actors make blocking calls (raft applies,
// driver and plugin calls) without stalling their mailbox. fn gets the
// actor's lifetime context (Lifetime), cancelled when the actor stops, and
// must end when it is; it returns the message to send back (nil: none). A
// result for an actor that has stopped meanwhile goes to dead letters.
func Go(ctx actor.Context, fn func(context.Context) any) {
	self := ctx.Self()
	root := ctx.ActorSystem().Root
	c := lifetimeOf(ctx).Context()
	go func() {
		if msg := fn(c); msg != nil {
			root.Send(self, msg)
		}
	}()
}

// Reply runs fn outside the actor's mailbox and sends its result to the
// sender of the message being handled (a request from another actor, a
// future, or a remote peer), so an actor answers a slow request without
// blocking. fn gets the actor's lifetime context, as with Go.
func Reply(ctx actor.Context, fn func(context.Context) any) {
	sender := ctx.Sender()
	root := ctx.ActorSystem().Root
	c := lifetimeOf(ctx).Context()
	go func() {
		if msg := fn(c); msg != nil && sender != nil {
			root.Send(sender, msg)
		}
	}()
}

// AllocReleased tells a client actor that an allocation actor has let go
// of everything it held on the host (tasks, volumes, network): from then
// on its local state may be dropped, once the servers no longer list it.
type AllocReleased struct{ AllocID string }
