// Package actors holds the plumbing shared by troupe's actors: the actor
// system with troupe's logger, the registry behind the live actor tree
// (GET /v1/actors), supervision specs, an injectable clock, the one retry
// policy (Retry), and workers that run blocking calls outside an actor's
// mailbox.
//
// Workers (worker.go, lifetime.go). An actor that blocks (raft applies,
// driver, plugin and server calls) embeds a Lifetime and runs the call
// with Go (or Reply, to answer its sender): fn gets the actor's lifetime
// context, which Registry.Props's middleware (or WithLifetime) cancels
// when the actor stops or restarts, so no worker outlives its actor; its
// result comes back as a message. A timeout is a context derived from it.
//
//	actors.Go(ctx, func(c context.Context) any {
//		c, cancel := context.WithTimeout(c, 30*time.Second)
//		defer cancel()
//		return &applied{err: prop.Apply(c, cmd)}
//	})
//
// Retries (retry.go). Every retry is an actors.Retry: cenkalti/backoff/v4
// delays (initial, max, multiplier or a linear step, attempts, deadline,
// no jitter unless asked, and then from a source tests replace) computed
// on the injected Clock. Its Delay and Next are pure, for state machines
// that carry their own time (alloc.Lifecycle); a Retrier keeps an actor's
// count. The wait is a timer that sends the actor a message.
//
// Every troupe actor is spawned with props from Registry.Props, which adds a
// receiver middleware and a mailbox counter. The tree is built from
// protoactor's own process registry (what really lives) joined with what
// each actor reports through that middleware: kind, phase (an actor that
// implements Phaser), restarts, message count and the last message.
//
//	sys := actors.NewSystem(logger)
//	pid, _ := sys.Root.SpawnNamed(sys.Props("scheduler", newScheduler), "scheduler")
//	tree := sys.Tree()
//
// The per-entity actors live in the sub-packages node, alloc, scheduler and
// volume; they do not import each other and talk by messages.
package actors
