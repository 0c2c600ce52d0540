// Package node holds the node actors.
//
// On a client, the client actor ("client") is the host's node actor: it
// fingerprints the host and its drivers, registers the node with the
// servers, restores the allocations in the client state file after a
// restart, spawns one alloc actor per allocation the servers push to it
// (client/allocs/<id>), and batches the status updates of its alloc actors
// back to the servers.
//
// On the raft leader, one server-side node actor per node ("nodes/<id>")
// pushes the node's allocations to that client whenever they change. Its
// status machine (heartbeats, down, disconnected) is driven by an injected
// clock.
//
// The node package does not import the alloc package: the agent injects a
// factory that builds alloc actor props.
package node
