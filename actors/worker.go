package actors

import (
	"github.com/asynkron/protoactor-go/actor"
)

// Go runs fn outside the actor's mailbox and sends its result back to the
// actor as a message. It is how actors make blocking calls (raft applies,
// driver and plugin calls) without stalling their mailbox. A result for an
// actor that has stopped meanwhile goes to dead letters.
func Go(ctx actor.Context, fn func() any) {
	self := ctx.Self()
	root := ctx.ActorSystem().Root
	go func() {
		if msg := fn(); msg != nil {
			root.Send(self, msg)
		}
	}()
}
