// Package node holds the node actors.
//
// On a client, the client actor ("client") is the host's node actor: it
// fingerprints the host and its drivers, registers the node with the
// servers, restores the allocations in the client state file after a
// restart, spawns one alloc actor per allocation the servers push to it
// (client/allocs/<id>), and batches the status updates of its alloc actors
// back to the servers.
//
// The client actor keeps what it knows of each allocation in one entry of
// an allocation table (client_table.go: allocEntry in allocTable): the
// allocation as spawned, whether its actor runs, its last client status,
// whether the servers' newest set lists it, whether its actor let go of
// the host, its stop_on_client_after window and its newest report. Every
// change goes through allocTable.Step, a pure step (no I/O, no clock) that
// returns effects the actor carries out: alloc actors to spawn, stop or
// message, state file records to delete, a batch of reports to send,
// timers to arm. An allocation that is gone (its actor stopped or dead,
// the servers no longer list it, its last report answered) leaves no
// entry, so the table does not grow and a resend after a reconnect only
// sends the reports of allocations still known.
//
// At start the client reads the state file (ClientSpec.DB, an
// AllocStore) before it registers; a read that fails is retried with the
// ClientSpec.Retry backoff (an actors.Retry, defaultClientRetry, as for
// every failed server call) on the injected clock, never taken for an
// empty file (that would start tasks that already run).
//
// The client probes the CSI plugin tasks on the node and keeps what they
// serve in ClientSpec.Plugins (a PluginTable): it is the table's one
// writer, and each write publishes a new immutable snapshot atomically, so
// the alloc actors' workers that look up a node plugin read a whole table
// without sharing anything the client changes.
//
// With ClientSpec.Devices (a device.Plugin, usually a device.Manager), the
// node's registration carries the host's device groups
// (NodeResources.Devices). After the first registration the client
// fingerprints the devices again every DeviceInterval and, when the plugin
// is a device.Watcher, whenever its Watch reports a change (the watch ends
// with the actor); a new set of instances or a changed health registers
// the node again (an upsert), so that the scheduler stops offering an
// unhealthy instance.
//
// On the raft leader, one server-side node actor per node ("nodes/<id>")
// pushes the node's allocations to that client whenever they change. Its
// status machine (heartbeats, down, disconnected) is driven by an injected
// clock. Each heartbeat's TTL is Nomad's: a base of max(MinTTL, live
// nodes / MaxHeartbeatsPerSecond), plus a random part of up to the base
// (HeartbeatConfig.TTL). A heartbeat costs O(1): the live node count comes
// from the state store, and one that changes nothing proposes nothing. A
// status change that fails to commit is tried again with
// statusCommitRetry (1 s doubling to 30 s, given up after 24 h).
//
// A missed heartbeat deadline is not the only way a node goes missing:
// evidence (SuspectNode: gossip reporting the client's member failed)
// makes the leader's node actor probe the client actor directly
// (messages.ProbeNode, a short timeout, retried once). Only a node that
// fails every probe, with no heartbeat in between, counts as missed early
// (Unreachable); one that answers is left as it is and evidence about it
// is ignored for a while (Suspicion, a state machine like nodeStatus). So
// a dead client's allocations are replaced within seconds, and a gossip
// flap never marks a healthy node down.
//
// A client cut off from the servers stops each allocation whose group sets
// disconnect.stop_on_client_after that long after its last successful
// contact with a server, on a timer of its own (client_contact.go).
//
// The node package does not import the alloc package: the agent injects a
// factory that builds alloc actor props.
package node
