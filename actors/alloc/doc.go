// Package alloc holds the client-side actors that run one allocation: the
// alloc actor (client/allocs/<id>) and one task actor per task
// (client/allocs/<id>/tasks/<name>).
//
// The alloc actor runs its hooks in order (alloc dir, later network,
// volumes, devices), spawns its task actors, folds their states into the
// allocation's client status and reports every change to its parent (the
// client's node actor). The task actor starts, watches, restarts and stops
// one task through a runtime driver; every driver call runs in a worker
// (actors.Go) and comes back as a message.
//
// Decisions are plain types tested without an actor system: RestartTracker
// (the task restart policy) and ClientStatus (how task states make an
// allocation's status).
//
// Durable state lives in the client's state file (runtime/clientstate): a
// task actor restored after an agent restart, or after its alloc actor
// crashed and was restarted by its supervisor, re-attaches to the running
// task through the stored driver handle instead of starting it again.
package alloc
