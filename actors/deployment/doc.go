// Package deployment watches deployments on the leader: one Actor per
// active deployment ("deployments/<id>", under the server's top actor),
// started with the leader's other actors and rebuilt from raft when
// leadership moves. It holds no truth of its own: the FSM keeps each
// group's counters (placed, healthy, unhealthy allocations) exact as
// allocations change, and the actor reads them, decides with Step (pure,
// the clock passed in) and proposes raft commands:
//
//   - an evaluation (TriggeredBy "deployment-watcher") when a group gained
//     healthy allocations, so the scheduler places the next batch;
//   - the deployment's failure when an allocation is unhealthy or a group
//     made no progress by its progress deadline, with the latest stable
//     job version registered again when the group has auto_revert;
//   - the canaries' promotion when every group with canaries has
//     auto_promote and all its canaries are healthy;
//   - the deployment's success once every group has its desired healthy
//     allocations (and its canaries promoted), which makes the job version
//     stable; a multiregion deployment is blocked instead, waiting for its
//     peer regions.
//
// MultiregionStep (multiregion.go) decides a multiregion deployment's
// part in its rollout across regions (pending, running, blocked,
// successful, failed by a peer) from the other regions' deployments; the
// agent's leader reads those and commits the step.
//
// The progress deadline is a timer on the injected clock, a message to
// self. A paused deployment does nothing until resumed.
package deployment
