// Package scheduler turns evaluations into placement plans.
//
// Process is the whole decision, a pure function of a state snapshot and an
// evaluation: reconcile what runs against what the job wants, filter nodes
// by feasibility (status, eligibility, datacenter, drivers, constraints,
// devices, host volumes, CSI volumes, resources), rank the candidates (bin-packing, job anti-affinity,
// affinities, spreads, Nomad's limit of max(2, ceil(log2 N)) candidates
// for service and batch jobs, every node for system jobs) and return a
// messages.ApplyPlan with the allocations to place and stop, and why
// placements failed.
//
// A group's host volumes (volume "x" { type = "host", source = "name" })
// are static checks (host_volumes.go): a node is feasible only when its
// Node.HostVolumes has every source, writable where the request does not
// say read_only; others are filtered as "missing compatible host volumes"
// (FilterHostVolumes). They are part of the NodeCache signature.
//
// A job is placed only on the nodes of its node pool (Job.NodePool; ""
// is "default", "all" is every node): nodes of other pools are never
// candidates and are counted nowhere, so a failure's NodesInPool and
// NodesEvaluated count the job's pool only, and AllocMetric.NodePool
// names it. A Snapshot that is a NodePoolSource (the state store is)
// hands over a pool's nodes from its index; otherwise each node costs one
// string compare. A system job's allocation on a node outside its pool
// is stopped as not needed, as one outside its datacenters.
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
// Tasks that ask for devices (Resources.Devices) get instances of them. A
// request names a node device group by "<type>", "<vendor>/<type>" or
// "<vendor>/<type>/<model>"; its constraints and affinities read
// ${device.attr.<name>}, ${device.model}, ${device.vendor} and
// ${device.type}, and values that both read as numbers, bare or with a
// unit such as MiB or GHz, compare as numbers. A node without, request by
// request, a matching group with Count healthy instances is filtered as
// "missing devices"; one whose live allocs and this plan's placements
// leave too few of them free is exhausted in dimension "devices: no
// device group matches nvidia/gpu with 2 free healthy instances". Of the
// groups with room, the one whose affinities score best is used, and the
// met weights over the sum of |weights| are averaged into the node's score
// as in Nomad. Each placed alloc's AllocatedResources.Tasks[task].Devices
// lists the instances given, the first free ones in the node's order;
// terminal allocs release theirs. As with ports, a node's device use is
// read from its allocs only when a group that asks for devices considers
// it, so other groups pay nothing.
//
// Tasks that ask for whole cores (Resources.Cores) get core IDs of the
// node's reservable ones (NodeResources.Cpu.ReservableCpuCores; 0 to
// TotalCpuCores-1 for a node that reports none) that no live alloc, no
// earlier placement of the plan and no pending placement holds, the first
// free in the node's order, in AllocatedResources.Tasks[task].Cpu.
// ReservedCores; such a task holds, instead of its cpu, its cores times
// the node's MHz per core (CpuShares / TotalCpuCores), as in Nomad. A node
// with too few free cores is exhausted in dimension "cores". A node's
// reserved cores are read only when a group with cores considers it: from
// the NodeCache (NodeCoresSource, kept by the state store per node and
// refreshed with the usage log), else from its allocs. Preemption frees no
// cores: a group with cores preempts only for CPU, memory, disk, ports or
// devices on a node where its cores are free already.
//
// Nodes are scored as Nomad scores them: each scorer gives a score in
// [-1, 1] and a node's score is the mean of those that apply to it:
// bin-packing (the fullest node first; with Options.SchedulerAlgorithm
// "spread" the emptiest), device affinities, job anti-affinity, the
// rescheduling penalty, node affinities (the job's, the group's and its
// tasks', met weights over the sum of |weights|, left out when none is
// met) and spreads (the group's and the job's, each weighted by its share
// of the weights: toward the target percents, or even over the values
// allocations were counted on; a node without the attribute is a value of
// its own). A group with spreads or affinities ranks max(100, count)
// candidates per placement instead of the log limit. Spread counts are
// kept per attribute value as placements and stops are made (spreadSet),
// so scoring a node never walks allocations. Each placed allocation's
// Metrics.ScoreMetaData lists the 5 best-scoring nodes with the scores of
// the scorers that applied (in ScoreNames/ScoreValues, which JSON shows as
// Nomad's Scores map) and their mean, best first.
//
// A job's new version updates a running allocation in place (the plan
// places it again under its ID, on its node, with the new version) when
// the job's settings and the allocation's group changed only in Count,
// ReschedulePolicy, Migrate or the job's Priority, which the tasks never
// see; otherwise the allocation is replaced (stopped with "alloc is being
// updated due to job update" and placed anew). Telling the two apart
// needs the allocation's version of the job: a Snapshot that is a
// JobVersionSource (the state store is). DryRun runs Process as if a job
// were registered and counts the plan per group, for `job plan`.
//
// The operator's scheduler configuration (a Snapshot that is a
// SchedulerConfigSource; else DefaultConfig) is read once per
// evaluation: its algorithm goes to Options.SchedulerAlgorithm, memory_max
// reaches an allocation only with memory oversubscription, and it says
// whether the job's scheduler preempts (system and sysbatch by default).
// Preemption runs only after a placement found no node: on every feasible
// node it picks, from the allocations of jobs at least 10 priority points
// lower, the holders of static ports the group asks for, then Nomad's
// greedy choice by priority, lowest first (chooseVictims), then holders
// of ports or devices until those fit; the node whose set has the least
// total priority, then the fewest evictions, wins. The plan evicts them
// (Preemptions, PreemptedAllocations) and carries an evaluation for each
// preempted job. While plain placements succeed none of this is built.
//
// Actor wraps it: the leader's "scheduler" actor plans one evaluation at a
// time, commits each plan through raft (from a worker, so its mailbox never
// blocks; a failed commit is tried again 1 s later, 1 s more each time up
// to 30 s: commitRetry, an actors.Retry), retries a plan the FSM partly
// refused (refusedBackoff), holds delayed
// evaluations on timers of an injected clock (waiting.go: each timer
// lives as long as its wait, until it fires, its plan is answered or the
// FSM reports the evaluation ended, EvalsEnded; Stats counts them as
// Nomad's total_waiting), and re-queues blocked
// evaluations when capacity changes (CapacityChanged: all of them) or when
// a CSI volume or plugin that a failed group uses changes so that it may
// now take the claim (CSIChanged, csiUnblocked: only those). On start it picks up every pending
// evaluation, so a new leader carries on where the old one stopped. While
// the configuration sets PauseEvalBroker it plans nothing and keeps the
// evaluations queued, until ConfigChanged finds the pause lifted.
package scheduler
