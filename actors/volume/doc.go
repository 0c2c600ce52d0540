// Package volume holds the CSI volume logic of the leader: claims with
// access-mode rules, the claim state machine, the volume state that a
// volume actor steps, the per-plugin controller queue that a controller
// actor steps, and the retry policy for unpublish; and the actors that
// carry out their effects (manager.go, volume_actor.go,
// controller_actor.go). The state machines are pure: no I/O, no clock, no
// actor system.
//
// The claim rules live in cluster/state, beside the FSM that applies the
// volume commands with the same code, and this package uses them by their
// names there: the claim states (state.ClaimTaken, ...), reasons
// (state.ReasonRelease, ...) and errors (state.ErrClaimConflict,
// *state.ClaimConflictError, ...); the access and attachment modes are
// messages' (messages.CSIAccessSingleNodeWriter, ...).
//
// Claims (state.ClaimsOf(vol).Check) apply the access modes. Every claim
// that is not freed holds its slot: single-node-* modes keep all claims on
// one node, *-single-writer and single-node-writer allow one writer,
// reader-only modes refuse writers (state.ErrVolumeReadOnly); a conflict
// is a *state.ClaimConflictError naming the volume and the allocation in
// the way. Claiming again for the same allocation returns the same claim.
//
// A claim moves taken -> unpublishing -> node-detached ->
// controller-detached -> freed (state.CanClaimTransition). Each edge accepts only
// some state.ClaimReasons: unpublishing -> node-detached needs the node's report, an
// abandoned node plugin, or a claim that never reached its node, so a
// failed node unmount is a hard gate before any controller detach.
//
// volumeState.Step (volume_state.go) turns inputs into Effects:
//
//	s := volume.newVolumeState(storedVolume)
//	e, err := s.Step(volume.Resume{})              // re-drive claims mid-way
//	e, err = s.Step(volume.claimRequested{Claim: volume.newClaim(allocID, nodeID, extNodeID, req)})
//	// propose e.Propose in order (Proposal -> raft Command), wait for commit,
//	// submit e.Controller to the plugin's controller actor, schedule
//	// RetryDue for e.Retry with actors.Retry.Delay, send e.Replies,
//	// log e.Transitions and e.Failures.
//
// At most one controller op per volume is in flight; Step queues the rest.
// state.ApplyClaimVolume and state.ApplyUpdateClaimState are how the FSM
// applies the volume commands; volumeState applies each proposal with them
// to its own copy, so it predicts exactly what raft will store.
//
// controllerQueue.Step (controller_queue.go) serializes a plugin's
// destructive controller ops across volumes, FIFO, one in flight, routed
// to the healthy instance on the lowest live node ID, sticky, failing over
// only on Unavailable. A new leader rebuilds it with
// rebuildControllerQueue(pendingOps(volumesOfPlugin)).
//
// state.ApplyUpsertPluginInstances, state.CountPlugin and
// state.WithPluginHealth keep plugin counts and a volume's Schedulable
// from client fingerprints (the FSM does it on UpsertPluginInstances).
//
// ManagerSpec.Retry (an actors.Retry, by default 1 s doubling to 1 min,
// 24 h deadline) is the controller unpublish and commit backoff; its
// Delay(attempt, elapsed) is pure.
//
// # Actors
//
// The agent spawns the manager while its server leads and stops it on
// losing leadership:
//
//	spec := &volume.ManagerSpec{State: func() volume.StateView { return store.Snapshot() },
//		Proposer: agent, Controllers: rpc, Clock: clock, Retry: policy,
//		Registry: sys.Registry, Logger: log, RPCTimeout: timeout}
//	pid, _ := ctx.SpawnNamed(sys.Props("volumes", volume.NewManager(spec)), "volumes")
//
// and hands it the clients' and operators' requests (ctx.Forward: the
// manager's children answer the original sender) and the FSM's events:
// *messages.VolumeClaimRequest -> *messages.VolumeClaimResponse,
// *messages.VolumeNodeDetachedRequest and *messages.VolumeOpRequest
// (create, delete, detach, deregister) -> *messages.VolumeOpResponse, and
// *state.Event (no answer). Errors travel in Response.Error with a
// messages.ErrorCode: not_found, invalid, not_leader, unavailable, internal
// and conflict (errorOf).
//
// The manager (server/volumes) has one volume actor per volume in use,
// v/<volume ID>, and one controller actor per plugin, c/<plugin ID>. On
// start it rebuilds them from the state: each controller queue from
// pendingOps, each claimed volume's state from the stored volume plus a
// Resume, whose ops already in the rebuilt queue are not submitted again,
// so no op that was due runs twice. On each event it passes stored
// volumes to their actors (volumeUpdated; a deregistered volume's actor
// stops once idle), plugin and node changes to the controller actors, and
// steps the claims whose allocation or node moved on (claimRule): a
// client-terminal allocation releases its claim, a down or gone node (or
// a lost allocation on a cut-off node, or a garbage-collected allocation)
// abandons the node plugin and goes straight to the controller step.
//
// A volume actor steps one input at a time: while a step's proposals
// commit (in a worker, in order) it keeps further messages, then submits
// the step's controller ops, arms the retry timers on the clock, answers
// the waiters and logs. A failed commit answers every waiter with the
// error and rebuilds the state from the store, with a Resume after a
// backoff. A controller actor runs its queue's dispatches through
// ControllerRPC, one at a time with RPCTimeout, and sends each outcome to
// the manager for the volume actor (NotFound is success for unpublish and
// delete; a transport error or Unavailable fails the instance over). A
// worker's result carries the actor instance that started it: a late
// result reaching a successor under the same name is ignored.
package volume
