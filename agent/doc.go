// Package agent wires a troupe agent together: the raft-replicated state
// (cluster, cluster/state), the actor system with the server actors
// (server, server/scheduler, server/nodes/<id>) and the client actors
// (client, client/allocs/<id>, .../tasks/<name>), the task drivers, and the
// HTTP API (httpapi).
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
package agent
