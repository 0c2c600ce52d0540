// Package server is a server's top actor ("server"): the RPC handlers that
// clients and peers call on a server, and, while the server leads, the
// leader's actors.
//
// The handlers (rpc.go) answer only on the leader; a follower answers
// not_leader with the leader's address, and the caller follows it. They
// commit a forwarded command (ApplyRequest), a node's registration, a
// client's allocation updates and its CSI plugin instances, hand
// heartbeats to the node's actor and volume requests to the volume
// manager. Which evaluations a change creates is decided in one place,
// package evals, and proposed in the same raft entry as the change: a
// node registration is ONE entry (RegisterNode.Evals), as are a client's
// updates with their follow-up evaluations (commands.go).
//
// On Leadership{Leader: true} the actor starts the scheduler
// (server/scheduler), one node actor per node in the state
// (server/nodes/<id>) and the volume manager (server/volumes), and routes
// the FSM's events (*state.Event) to them; on losing leadership it stops
// them all. They are rebuilt from the replicated state each time.
//
// The actor reaches the rest of the agent only through its Spec's narrow
// interfaces: Raft (lead? commit), Proposer (commit through whichever
// server leads, for the leader's actors), State (read the replicated
// state) and ClientLocator (where a node's client actor lives; Clients is
// the usual one). The agent builds the Spec, fixing the local client's
// identity before the actor starts, spawns the actor and sends it
// Leadership and the FSM's events.
//
// Garbage collection: the leader runs a GCActor ("server/gc") that every
// GCConfig.Interval, on the injected clock, calls the pure DecideGC on the
// state (Nomad's rules, state.Snap's *Collectable) and proposes the
// resulting GarbageCollect commands, at most state.MaxGCItems items each,
// in a worker. CollectGarbage does the same at once for a forced
// collection (thresholds 0). The FSM re-checks every item at apply time.
// Jobs that keep more versions than GCConfig.JobVersions are trimmed in
// the same commands. A collected node's actor is stopped and forgotten
// (Event.NodesDeleted).
package server
