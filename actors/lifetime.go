package actors

import (
	"context"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
)

// Lifetime is an actor's lifetime context: it is cancelled when the actor
// stops or restarts, which ends every worker the actor started with Go or
// Reply. An actor that starts workers embeds one:
//
//	type Actor struct {
//		actors.Lifetime
//		...
//	}
//
// and is spawned with Registry.Props (or props WithLifetime), whose
// middleware ends the lifetime on *actor.Stopping and *actor.Restarting,
// before the actor's own handler sees them. A restarted actor is a new
// value with a new Lifetime. Context is for the actor itself (a call
// whose cancel it keeps); only the actor's goroutine uses a Lifetime.
type Lifetime struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// Context returns the actor's lifetime context (cancelled once the actor
// stops).
func (l *Lifetime) Context() context.Context {
	if l.ctx == nil {
		// The one root of an actor's workers: ended by end, on stop.
		l.ctx, l.cancel = context.WithCancel(context.Background())
	}
	return l.ctx
}

func (l *Lifetime) lifetime() *Lifetime { return l }

// end cancels the lifetime; a later Context is cancelled too.
func (l *Lifetime) end() {
	l.Context()
	l.cancel()
}

// lifetimed is an actor that embeds a Lifetime.
type lifetimed interface{ lifetime() *Lifetime }

// lifetimeOf returns the Lifetime of the actor that ctx runs.
func lifetimeOf(ctx actor.Context) *Lifetime {
	lt, ok := ctx.Actor().(lifetimed)
	if !ok {
		panic(fmt.Sprintf("actors: %T starts a worker but embeds no actors.Lifetime", ctx.Actor()))
	}
	return lt.lifetime()
}

// endLifetime ends the lifetime of a (an actor that may embed one) when
// msg stops or restarts it.
func endLifetime(a actor.Actor, msg any) {
	switch msg.(type) {
	case *actor.Stopping, *actor.Restarting:
		if lt, ok := a.(lifetimed); ok {
			lt.lifetime().end()
		}
	}
}

// WithLifetime is the props option that ends an actor's Lifetime when it
// stops, for actors spawned without Registry.Props (which has it).
func WithLifetime() actor.PropsOption {
	return actor.WithReceiverMiddleware(func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
			endLifetime(c.Actor(), env.Message)
			next(c, env)
		}
	})
}
