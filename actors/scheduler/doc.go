// Package scheduler turns evaluations into placement plans.
//
// Process is the whole decision, a pure function of a state snapshot and an
// evaluation: reconcile what runs against what the job wants, filter nodes
// by feasibility (status, eligibility, datacenter, drivers, constraints,
// resources), rank the candidates (bin-packing, job anti-affinity, Nomad's
// limit of max(2, ceil(log2 N)) candidates for service and batch jobs,
// every node for system jobs) and return a messages.ApplyPlan with the
// allocations to place and stop, and why placements failed.
//
// Actor wraps it: the leader's "scheduler" actor plans one evaluation at a
// time, commits each plan through raft (from a worker, so its mailbox never
// blocks), retries a plan the FSM partly refused, holds delayed
// evaluations on timers of an injected clock, and re-queues blocked
// evaluations when capacity changes. On start it picks up every pending
// evaluation, so a new leader carries on where the old one stopped.
package scheduler
