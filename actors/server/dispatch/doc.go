// Package dispatch builds the children of parameterized jobs.
//
// A parameterized job (Nomad's parameterized block, batch jobs only) is a
// template: registering it creates no evaluation, and its status is
// running as long as it is not stopped. `troupe job dispatch` and
// PUT /v1/job/:id/dispatch create a child "<id>/dispatch-<unix
// seconds>-<8 hex>" (with an id prefix template T:
// "<id>/dispatch-T-<unix seconds>-<8 hex>", as Nomad names them) that
// carries the dispatch's payload and meta (merged over the parent's),
// ParentID the parent's ID, Dispatched set and no parameterized block.
//
// Check applies Nomad's rules to a dispatch request before anything is
// proposed (payload forbidden or required, at most 16 KiB, meta keys
// required or allowed); Command is the one raft command (DispatchJob)
// that stores the child and its evaluation. The FSM checks again that the
// parent is a parameterized job that is not stopped, and answers a token
// a stored child already has with that child (state.DuplicateDispatchError),
// so that two racing dispatches with one idempotency token make one child.
//
// The payload is stored raw (Nomad stores it snappy-compressed; troupe
// has no snappy dependency, and the payload is at most 16 KiB).
package dispatch
