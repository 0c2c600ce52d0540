// Package volume holds the CSI volume logic of the leader: claims with
// access-mode rules, the claim state machine, the volume state that a
// volume actor steps, the per-plugin controller queue that a controller
// actor steps, and the retry policy for unpublish. Everything here is
// pure: no I/O, no clock, no actor system; the actors (next to come) carry
// out the effects.
//
// The claim rules live in cluster/state, beside the FSM that applies the
// volume commands with the same code; claims.go, claim_state.go and
// errors.go give them this package's names (AccessSingleNodeWriter,
// StateTaken, ErrClaimConflict, ConflictError are aliases).
//
// Claims (state.ClaimsOf(vol).Check) apply the access modes. Every claim
// that is not freed holds its slot: single-node-* modes keep all claims on
// one node, *-single-writer and single-node-writer allow one writer,
// reader-only modes refuse writers (ErrReadOnly); a conflict is a
// *ConflictError naming the volume and the allocation in the way.
// Claiming again for the same allocation returns the same claim.
//
// A claim moves taken -> unpublishing -> node-detached ->
// controller-detached -> freed (state.CanClaimTransition). Each edge accepts only
// some Reasons: unpublishing -> node-detached needs the node's report, an
// abandoned node plugin, or a claim that never reached its node, so a
// failed node unmount is a hard gate before any controller detach.
//
// VolumeState.Step (volume_state.go) turns inputs into Effects:
//
//	s := volume.NewVolumeState(storedVolume)
//	e, err := s.Step(volume.Resume{})              // re-drive claims mid-way
//	e, err = s.Step(volume.ClaimRequested{Claim: volume.NewClaim(allocID, nodeID, extNodeID, req)})
//	// propose e.Propose in order (Proposal -> raft Command), wait for commit,
//	// submit e.Controller to the plugin's controller actor, schedule
//	// RetryDue for e.Retry with RetryPolicy.Delay, send e.Replies,
//	// log e.Transitions and e.Failures.
//
// At most one controller op per volume is in flight; Step queues the rest.
// state.ApplyClaimVolume and state.ApplyUpdateClaimState are how the FSM
// applies the volume commands; VolumeState applies each proposal with them
// to its own copy, so it predicts exactly what raft will store.
//
// ControllerQueue.Step (controller_queue.go) serializes a plugin's
// destructive controller ops across volumes, FIFO, one in flight, routed
// to the healthy instance on the lowest live node ID, sticky, failing over
// only on Unavailable. A new leader rebuilds it with
// RebuildControllerQueue(PendingOps(volumesOfPlugin)).
//
// state.ApplyUpsertPluginInstances, state.CountPlugin and
// state.WithPluginHealth keep plugin counts and a volume's Schedulable
// from client fingerprints (the FSM does it on UpsertPluginInstances).
// RetryPolicy (retry.go) is the unpublish backoff (1 s doubling to 1 min,
// 24 h deadline): Delay(attempt, elapsed) is pure, NewBackOff(clock) gives
// a cenkalti/backoff ExponentialBackOff on an injected clock.
package volume
