package api

import (
	"net/http"

	"github.com/troupe-dev/troupe/messages"
)

// Allocations is the /v1/allocations and /v1/allocation/:id family.
type Allocations struct{ c *Client }

// Allocations returns the allocation endpoints.
func (c *Client) Allocations() *Allocations { return &Allocations{c: c} }

// List lists allocations (GET /v1/allocations).
func (a *Allocations) List(q *QueryOptions) ([]*AllocListStub, *QueryMeta, error) {
	var out []*AllocListStub
	qm, err := a.c.query("/v1/allocations", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Info reads one allocation (GET /v1/allocation/:id).
func (a *Allocations) Info(id string, q *QueryOptions) (*messages.Allocation, *QueryMeta, error) {
	var out messages.Allocation
	qm, err := a.c.query("/v1/allocation/"+escape(id), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Stop stops one allocation (POST /v1/allocation/:id/stop); the job's
// scheduler replaces it.
func (a *Allocations) Stop(id string, w *WriteOptions) (*AllocStopResponse, error) {
	var out AllocStopResponse
	if _, err := a.c.write(http.MethodPost, "/v1/allocation/"+escape(id)+"/stop", nil, &out, w); err != nil {
		return nil, err
	}
	return &out, nil
}
