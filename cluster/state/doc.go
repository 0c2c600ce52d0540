// Package state is troupe's replicated cluster state: an in-memory,
// indexed store of jobs (and their last versions), evaluations,
// allocations, nodes, CSI volumes and CSI plugins, and the raft FSM that
// is its only writer.
//
// # Store
//
// NewStore returns an empty Store. Readers take a Snapshot, a consistent
// read view that costs nothing to make and never changes:
//
//	snap := store.Snapshot()
//	job := snap.JobByID("default", "web")
//	allocs := snap.AllocsByJob("default", "web")
//
// Snap methods return the stored objects themselves: never mutate them
// (proto.Clone first). Lists are sorted by ID (jobs by namespace, then
// ID). Stored allocations carry no Job; join it with
// snap.JobVersion(ns, id, alloc.JobVersion). *Snap satisfies the
// scheduler's snapshot interface (JobByID, Nodes, NodeByID, AllocsByJob,
// AllocsByNode).
//
// Blocking queries use the raft index of the last change to each table:
//
//	idx := store.Wait(ctx, lastSeen, state.TableAllocs) // blocks until allocs change or ctx ends
//
// The store also keeps the raft index of the last entry the FSM applied,
// whatever it changed (maybe no table at all), or of the snapshot it
// restored. A server that forwarded a write to the leader answers once its
// own replica has that entry (read your writes on a follower):
//
//	err := store.WaitApplied(ctx, index) // nil once AppliedIndex() >= index
//
// Jobs, versions, evaluations, nodes, CSI volumes (by namespace and ID, by
// ID alone, by plugin), CSI plugins and the table indexes are go-memdb
// tables. Allocations, which count in millions, live in a purpose-built
// persistent structure (pmap: sorted chunks, copied on write per
// transaction) with indexes by ID, job, node and eval, and per-node usage
// of non-terminal allocations, so committing a 1000-allocation plan costs
// O(1000 log n) and checking a node's free resources never scans. The
// count of nodes that are not down (LiveNodes, which scales every
// heartbeat's TTL) is kept beside them on every node write.
//
// # FSM
//
// NewFSM(store, logger) is the raft.FSM. Each log entry is a proto-encoded
// messages.Command; Apply runs one handler (apply_*.go, one per command)
// in one write transaction and answers its result: *RegisterJobResult,
// *DeregisterJobResult, *messages.ApplyPlanResult, nil, or an error value
// (ErrJobNotFound, ErrNodeNotFound, ErrAllocNotFound, ErrBadCommand, the
// volume errors) in which case nothing changed. After each commit, the
// callbacks registered with OnApply receive an Event naming the
// evaluations that are ready or delayed, the nodes whose allocations or
// records changed, and the jobs, volumes and plugins that changed; the
// leader's actors subscribe through it. Callbacks run on raft's FSM
// goroutine: they must only hand the event on.
//
// # Scheduler configuration and preemption
//
// SetSchedulerConfig stores the operator's scheduler configuration (one
// row of TableSchedulerConfig, in snapshots too), with check-and-set
// against its ModifyIndex (0 while none is stored); it answers
// *SetSchedulerConfigResult, or ErrInvalidSchedulerConfig for an unknown
// algorithm. Snap.SchedulerConfig answers messages.DefaultSchedulerConfiguration while
// none is stored. An ApplyPlan's Preemptions evict (desired status
// "evict", PreemptedByAllocation set) only with the placement they make
// room for, which fits counting what they free; one whose victim is gone,
// over or already evicted is refused together with its placement, and the
// plan's evaluations for preempted jobs (TriggeredBy "preemption") are
// kept only for jobs that lost an allocation.
//
// # CSI volumes and plugins
//
// RegisterVolume, DeregisterVolume, ClaimVolume, UpdateClaimState and
// UpsertPluginInstances keep the csi_volumes and csi_plugins tables. The
// claim rules are here, shared with the leader's volume actors
// (actors/volume) so that both agree on every claim: access modes and
// Claims.Check (volume_claims.go), the claim state table
// (volume_claim_state.go), ApplyClaimVolume, ApplyUpdateClaimState and
// CheckVolumeUnused (volume_apply.go), and ApplyUpsertPluginInstances,
// CountPlugin and WithPluginHealth (volume_plugin.go). The FSM answers
// their errors (*ClaimConflictError, ErrIllegalTransition...) as the Apply
// response. Volume commands name a volume by ID alone, so a volume ID is
// unique across namespaces (CSIVolumeAnyNamespace finds it). Every volume
// of a plugin carries the plugin's counts and Schedulable, recomputed when
// its instances change. Event.VolumesChanged and Event.PluginsChanged name
// what changed.
//
// # Node pools
//
// The node_pools table starts with the built-in "default" and "all"
// pools, which can be neither changed nor deleted. UpsertNodePools and
// DeleteNodePools keep it, through the checks the HTTP API runs first
// too (CheckUpsertNodePools, CheckDeleteNodePools: a pool with nodes or
// with jobs that are not dead stays). A registering node goes into its
// pool ("default" when it names none), which is created when missing; a
// job must name a pool that exists ("" is "default"). Nodes and jobs are
// indexed by pool (NodesByPool, JobsByPool).
//
// # Variables
//
// The variables table holds Nomad Variables sealed (cluster/keyring): the
// FSM stores and snapshots only their ciphertext, with the ID of the root
// key that opens it. The root_keys table is the keyring itself; a
// RotateKeyring adds the leader's new key as the active one and makes the
// one before inactive (it still opens what it sealed). VarApply sets or
// deletes a variable, checked against the stored ModifyIndex when
// CheckIndex (a *VariableCASError carries the variable in the way); the
// leader runs ValidateVariable (Nomad's path rules, 64 KiB of items) on
// the plaintext first. Because the keys are in raft, the log and the
// snapshots hold each key next to the ciphertext it opens (Nomad keeps its
// keys in a keystore on each server's disk instead).
//
// # Namespaces
//
// The namespaces table starts with the built-in "default", which cannot
// be deleted (its description and meta may change). UpsertNamespaces and
// DeleteNamespaces keep it, through CheckUpsertNamespaces and
// CheckDeleteNamespaces, which the HTTP API runs first too: a namespace
// with a job that is not dead, or with a volume, stays. The HTTP API
// refuses a job or volume in a namespace that does not exist; the FSM
// takes the namespace a command names as it is.
//
// ApplyPlan re-checks every placement at apply time: the node must exist,
// be ready and eligible, and still have room (capacity minus reserved
// minus the non-terminal allocations on it, counting those the same plan
// stops as freed), and its host ports and device instances must be free
// (device instances healthy, too). What no longer fits is listed in the
// result's Refused.
//
// Job status is derived as Nomad does (see jobStatus) and recomputed
// whenever a job's allocations or evaluations change.
//
// Snapshot writes the whole state as a stream of varint-length-prefixed
// messages.Snapshot records of at most 1024 objects each (the first
// carries the raft index), so memory stays bounded with a million
// allocations; Restore rebuilds a fresh store from it and publishes an
// Event naming every pending evaluation, node, job, volume and plugin.
//
// Garbage collection (gc_rules.go, apply_gc.go): GarbageCollect names
// evaluations, jobs, nodes and plugins to purge with the cutoffs they
// were chosen at; the FSM purges only those still collectable by the same
// rules (Snap.JobCollectable, EvalCollectable, NodeCollectable,
// PluginCollectable), removing allocations from every index of the
// allocation table and from the job summaries (a summary left with
// nothing to count is deleted), node usage and disconnect windows. An
// allocation that still holds a CSI claim is not collectable until the
// claim went through its release to freed (volumes are indexed by their
// claims' allocations), so no claim names a collected allocation. The
// same command trims the versions of the jobs it names in TrimJobs to
// KeepVersions; a collected node is named in Event.NodesDeleted.
//
// # Event stream
//
// After each applied command the FSM hands the store the decoded command,
// its answer and a read view as of its index (events.go); nothing is
// copied or encoded then. The store keeps the last DefaultEventBufferSize
// (SetEventBufferSize) such entries, fewer once they keep the state of
// more than EventBufferObjects allocations alive. A reader builds the
// events (events_cmd.go, events_objects.go: Nomad's topics and types, an
// object changed when its pointer differs from the view before) when it
// asks, so a slow reader costs the FSM nothing; one asking for entries
// already dropped gets ErrEventsLost:
//
//	sub := store.SubscribeEvents(fromIndex, match)
//	batches, err := sub.Next(ctx) // blocks until matching events are there
package state
