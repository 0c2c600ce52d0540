// Package actors holds the plumbing shared by troupe's actors: the actor
// system with troupe's logger, the registry behind the live actor tree
// (GET /v1/actors), supervision specs, an injectable clock, and workers that
// run blocking calls outside an actor's mailbox.
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
