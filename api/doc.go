// Package api is the Go client of troupe's HTTP API and the wire types that
// API speaks.
//
// The API is shaped like Nomad's /v1 API: PascalCase JSON, blocking queries
// through the `index` and `wait` query parameters, the X-Nomad-Index,
// X-Nomad-KnownLeader and X-Nomad-LastContact response headers. Domain
// objects (jobs, allocations, evaluations, nodes) travel as the generated
// structs of package messages; this package defines only what is not one
// (list stubs, request and response envelopes, agent and raft views, the
// actor tree), in types.go, which the HTTP server shares.
//
// Use:
//
//	c, err := api.NewClient(nil) // TROUPE_ADDR, else http://127.0.0.1:4646
//	resp, _, err := c.Jobs().Register(job, nil)
//	allocs, meta, err := c.Jobs().Allocations(job.ID, &api.QueryOptions{
//		WaitIndex: lastIndex, WaitTime: 30 * time.Second,
//	})
//
// Endpoints are grouped as in Nomad's client: Jobs, Allocations,
// Evaluations, Nodes, NodePools, Namespaces, Volumes, Plugins, Agent, Status,
// Operator, Actors, AllocFS (Logs; List, Stat, Cat, ReadAt, Stream of the
// allocation dir). Any non-2xx answer is an *APIError (errors.Is(err, ErrNotFound)
// for a 404).
// QueryOptions.WithContext binds a request to a context.
package api
