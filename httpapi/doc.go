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
// pool. Bodies over 4 MiB are refused with 413.
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
// The allocation dir (alloc_fs.go: GET /v1/client/fs/ls, stat, cat,
// readat and stream /:alloc?path=) is served, in Nomad's shapes
// (AllocFileInfo, StreamFrame), by a Backend that also implements
// AllocDirBackend (else 501), and passed on like logs. path is relative
// to the allocation dir ("/" is its root); one that leaves it by ".." or
// by a symlink is a 400 and nothing outside is read (safepath.OpenIn);
// stream follows the file unless follow=false.
package httpapi
