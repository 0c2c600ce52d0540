package api

import (
	"net/http"

	"github.com/troupe-dev/troupe/messages"
)

// Node scheduling eligibility values.
const (
	NodeEligible   = "eligible"
	NodeIneligible = "ineligible"
)

// Nodes is the /v1/nodes and /v1/node/:id family.
type Nodes struct{ c *Client }

// Nodes returns the node endpoints.
func (c *Client) Nodes() *Nodes { return &Nodes{c: c} }

// List lists nodes (GET /v1/nodes).
func (n *Nodes) List(q *QueryOptions) ([]*NodeListStub, *QueryMeta, error) {
	var out []*NodeListStub
	qm, err := n.c.query("/v1/nodes", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Info reads one node (GET /v1/node/:id).
func (n *Nodes) Info(id string, q *QueryOptions) (*messages.Node, *QueryMeta, error) {
	var out messages.Node
	qm, err := n.c.query("/v1/node/"+escape(id), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Allocations reads the node's allocations, whole and with their jobs
// (GET /v1/node/:id/allocations).
func (n *Nodes) Allocations(id string, q *QueryOptions) ([]*messages.Allocation, *QueryMeta, error) {
	var out []*messages.Allocation
	qm, err := n.c.query("/v1/node/"+escape(id)+"/allocations", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// ToggleEligibility marks a node eligible or ineligible for scheduling
// (POST /v1/node/:id/eligibility).
func (n *Nodes) ToggleEligibility(id string, eligible bool, w *WriteOptions) (*NodeEligibilityUpdateResponse, error) {
	req := &NodeEligibilityUpdateRequest{NodeID: id, Eligibility: NodeIneligible}
	if eligible {
		req.Eligibility = NodeEligible
	}
	var out NodeEligibilityUpdateResponse
	if _, err := n.c.write(http.MethodPost, "/v1/node/"+escape(id)+"/eligibility", req, &out, w); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateDrain starts (spec set) or ends (spec nil) a node's drain (POST
// /v1/node/:id/drain). markEligible makes the node eligible again when
// the drain ends.
func (n *Nodes) UpdateDrain(id string, spec *DrainSpec, markEligible bool, w *WriteOptions) (*NodeDrainUpdateResponse, error) {
	req := &NodeUpdateDrainRequest{NodeID: id, DrainSpec: spec, MarkEligible: markEligible}
	var out NodeDrainUpdateResponse
	if _, err := n.c.write(http.MethodPost, "/v1/node/"+escape(id)+"/drain", req, &out, w); err != nil {
		return nil, err
	}
	return &out, nil
}
