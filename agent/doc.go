// Package agent wires a troupe agent together: the raft-replicated state
// (cluster, cluster/state), the actor system with the server actor
// (actors/server: server, server/scheduler, server/nodes/<id>,
// server/volumes) and the client actors (client, client/allocs/<id>,
// .../tasks/<name>), the task drivers, and the HTTP API (httpapi). The
// rules live in those packages; the agent builds their specs, starts them
// in order (Start's steps) and passes raft's leadership changes and the
// FSM's events to the server actor (server.go).
//
// What the server actor reads of the agent is fixed before it starts:
// this server's raft, the state store and the local client's identity
// (node ID and client actor PID, identifyClient), so the leader's node
// actors, which start as soon as raft restores their nodes, never read
// what the client's start writes later. A follower forwards raft commands
// to the leader and answers once its own replica has applied them
// (forward.go).
//
// Around an election requests wait instead of failing (leadership.go): a
// write that finds no leader, and a consistent read that finds no leader
// whose store has caught up (one that has finished the barrier of its
// term), wait up to Config.RPCHoldTimeout (Nomad's rpc_hold_timeout, 5 s)
// and then fail with an error the HTTP API answers 500 "No cluster
// leader". A follower passes consistent reads on to the leader.
//
// A -dev agent is one process that is both server and client, with its
// state in a temporary directory. An agent with -data-dir keeps raft's log
// and snapshots under <data-dir>/server, the client state file under
// <data-dir>/client and the allocation directories under <data-dir>/alloc,
// so a restart restores everything and re-attaches to running tasks.
//
// Clients join the servers' gossip pool. On the leader, a client member
// that gossip declares failed is passed to its node actor as evidence
// (evidence.go), which probes the client before it takes the node for
// missed; a member that left gracefully is no evidence.
//
// The HTTP API reads an allocation's directory (alloc fs) through
// AllocDirFor (alloc_fs.go): the dir of an allocation this client runs,
// or the agent whose node runs it, as AllocForLogs finds logs.
package agent
