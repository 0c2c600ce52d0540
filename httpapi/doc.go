// Package httpapi is troupe's HTTP API: Nomad's /v1 endpoints and shapes
// (jobs, allocations, evaluations, nodes, client logs, agent, status,
// operator raft and scheduler configuration) plus GET /v1/actors, the
// live actor tree.
//
// Reads come from the local state store and support Nomad's blocking
// queries (?index=&wait=, answered with X-Nomad-Index and X-Troupe-Index).
// Writes are validated first (a bad request is a 4xx naming the problem and
// changes nothing) and then become one raft command each, proposed through
// Backend.Apply. Operator requests on CSI volumes (create, delete, detach,
// deregister) instead go to the leader's volume manager through
// Backend.VolumeOp, whose error codes become statuses (not_found 404,
// invalid 400, conflict 409, no leader 503). Node pools (/v1/node/pools,
// /v1/node/pool/:name[/nodes|/jobs]) are written on the leader's API, which
// checks them against its state first: 404 for an unknown pool, 409 for
// one that still has nodes or jobs, 400 for a bad name or a built-in
// pool. Variables (/v1/var/:path, /v1/vars, variables.go) are sealed on
// the leader with the active root key before they are proposed (the first
// write makes the first key; PUT /v1/operator/keyring/rotate a new one,
// keyring.go) and opened on read; ?cas= is a check-and-set whose
// conflict is a 409 carrying the current variable, a bad path or items
// over 64 KiB a 400. Namespaces (/v1/namespaces, /v1/namespace[/:name])
// are written the same way: 404 for an unknown one, 409 for one with jobs
// that are not dead, volumes or variables, 400 for a bad name, "default",
// or Nomad's Quota, Capabilities and node pool, Vault and Consul blocks
// (not supported). A job, volume or variable in a namespace that does not
// exist is a 400 naming it (checked here, and again by the FSM, so a
// registration racing the namespace's delete is refused too); a write's
// ?namespace= places it, else its own namespace (Nomad's rule). Every job,
// volume and variable endpoint reads and writes ?namespace= ("default"
// when none; one in another namespace is a 404 like a missing one; "*" a
// 400), and the lists of jobs, allocations, evaluations, volumes and
// variables answer it ("*" for all). Allocations and evaluations, named by
// a UUID, are found whatever ?namespace= says, as in Nomad without ACLs
// (namespace_query.go). Bodies over 4 MiB are refused with 413.
//
// Lists take Nomad's ?filter= (filter.go: a go-bexpr expression, compiled
// once per request and evaluated against the JSON each item is answered
// as, with the empty fields the encoder leaves out filled in); one that
// does not parse, or cannot be evaluated, is a 400 "failed to read filter
// expression: ...". The lists Nomad pages (paging.go) take ?per_page=,
// ?next_token= and ?reverse=, applied after the filter in Nomad's order
// (allocations and evaluations by create index, the others by
// namespace and ID or name), with X-Nomad-NextToken naming the first item
// of the next page.
//
// Nodes, allocations and CSI volumes are answered in Nomad's shapes
// (shapes.go): every struct Nomad's client dereferences is present, zero-
// valued when empty (a node's NodeResources and ReservedResources with Cpu,
// Memory and Disk, and Nomad's older Resources and Reserved; an
// allocation's Resources, TaskResources, Metrics and AllocatedResources
// with Tasks and Shared, whose Ports list its networks' ports); a volume
// has ReadAllocs and WriteAllocs (claiming allocation IDs to null) and
// Allocations (their list rows) beside its Claims. /v1/status/leader
// answers the leader's raft (RPC) address, or 500 "No cluster leader"
// while there is none.
//
// Reads are truthful (leader.go): a default read is answered by a leader
// whose store has applied every committed entry, or passed on to the
// leader; while there is none (before an election, or before a new
// leader's barrier) it waits, bounded by the agent's hold timeout, then
// answers 500 "No cluster leader". Only ?stale reads this server's
// replica at once. Every answer says X-Nomad-KnownLeader and
// X-Nomad-LastContact (ms since the leader was last heard from, 0 on the
// leader) truthfully. A write that reads the state before it proposes
// waits the same way (writeToLeader); the Backend's Apply waits for a
// leader itself. A leader that cannot be reached (killed, while raft here
// still names it for a heartbeat timeout) is skipped: the read, or the
// write that could not be dialled, goes to the next leader.
//
//	h := httpapi.New(agent, logger)
//	http.ListenAndServe("127.0.0.1:4646", h)
//
// Operator requests on a running allocation (alloc_ops.go: POST or PUT
// /v1/client/allocation/:id/signal and /restart, Nomad's
// AllocSignalRequest and AllocRestartRequest, answered with an empty
// GenericResponse) go to the allocation's actor through Backend.AllocOp
// on the agent whose client runs it; another agent passes them there, as
// it passes log requests (AllocForLogs, ProxyTo). An unknown allocation
// or task is a 404, a bad signal or request a 400.
//
// Usage (alloc_stats.go): GET /v1/client/allocation/:id/stats[?task=]
// answers Nomad's AllocResourceUsage (per task and summed: memory RSS,
// cache, swap, usage, max usage; CPU percent, user and system mode,
// TotalTicks, throttling) from a Backend that is also a StatsBackend (the
// agent: the tasks' drivers, driver.Statser), on the agent whose client
// runs the allocation; another agent passes the request there.
//
// Exec (alloc_exec.go, exec_stream.go): GET /v1/client/allocation/:id/exec
// ?task=&command=["..."]&tty= upgrades to a websocket that speaks Nomad's
// exec framing (JSON frames: stdin data or close and tty_size from the
// client; stdout, stderr and finally exited with result.exit_code from the
// agent), so Nomad's Allocations().Exec works unchanged. The command runs
// through a Backend that is also an ExecBackend (the agent: the task's
// driver, driver.Execer); another agent's allocation is proxied with its
// upgrade. A refusal (unknown allocation or task, bad command, a driver
// that cannot exec) is an HTTP error to a plain request and, to a
// websocket, a close frame with code 4000+status and the reason as text.
//
// The allocation dir (alloc_fs.go: GET /v1/client/fs/ls, stat, cat,
// readat and stream /:alloc?path=) is served, in Nomad's shapes
// (AllocFileInfo, StreamFrame), by a Backend that also implements
// AllocDirBackend (else 501), and passed on like logs. path is relative
// to the allocation dir ("/" is its root); one that leaves it by ".." or
// by a symlink is a 400 and nothing outside is read (safepath.OpenIn);
// stream follows the file unless follow=false.
package httpapi
