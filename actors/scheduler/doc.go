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
// Groups with network ports get them on the chosen node: each placed
// alloc's AllocatedResources.Shared.Networks copies the group's networks
// with the node's IP, static ports as asked and every dynamic port given a
// free port of the node's dynamic range (NodeResources.MinDynamicPort /
// MaxDynamicPort, else Options, else 20000-32000), picked with
// Options.Rand. A node whose live allocs, or this plan's placements,
// already hold a static port, or that has too few free dynamic ports, is
// exhausted in dimension "network: reserved port collision http=8080" or
// "network: dynamic port selection failed", as in Nomad. The ports used on
// a node are read from its allocs only when a group that asks for ports
// considers it.
//
// Actor wraps it: the leader's "scheduler" actor plans one evaluation at a
// time, commits each plan through raft (from a worker, so its mailbox never
// blocks), retries a plan the FSM partly refused, holds delayed
// evaluations on timers of an injected clock, and re-queues blocked
// evaluations when capacity changes. On start it picks up every pending
// evaluation, so a new leader carries on where the old one stopped.
package scheduler
