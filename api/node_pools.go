package api

import (
	"net/http"

	"github.com/troupe-dev/troupe/messages"
)

// Built-in node pools.
const (
	NodePoolDefault = "default"
	NodePoolAll     = "all"
)

// NodePools is the /v1/node/pools and /v1/node/pool/:name family.
type NodePools struct{ c *Client }

// NodePools returns the node pool endpoints.
func (c *Client) NodePools() *NodePools { return &NodePools{c: c} }

// List lists node pools by name, those starting with q.Prefix when it is
// set (GET /v1/node/pools).
func (n *NodePools) List(q *QueryOptions) ([]*messages.NodePool, *QueryMeta, error) {
	var out []*messages.NodePool
	qm, err := n.c.query("/v1/node/pools", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Info reads one node pool (GET /v1/node/pool/:name).
func (n *NodePools) Info(name string, q *QueryOptions) (*messages.NodePool, *QueryMeta, error) {
	var out messages.NodePool
	qm, err := n.c.query("/v1/node/pool/"+escape(name), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Register creates a node pool or replaces its description and meta (PUT
// /v1/node/pools).
func (n *NodePools) Register(pool *messages.NodePool, w *WriteOptions) (*WriteMeta, error) {
	return n.c.write(http.MethodPut, "/v1/node/pools", pool, nil, w)
}

// Delete deletes a node pool that has no nodes and no job that is not
// dead (DELETE /v1/node/pool/:name).
func (n *NodePools) Delete(name string, w *WriteOptions) (*WriteMeta, error) {
	return n.c.write(http.MethodDelete, "/v1/node/pool/"+escape(name), nil, nil, w)
}

// ListNodes lists the nodes in a pool (GET /v1/node/pool/:name/nodes).
func (n *NodePools) ListNodes(name string, q *QueryOptions) ([]*NodeListStub, *QueryMeta, error) {
	var out []*NodeListStub
	qm, err := n.c.query("/v1/node/pool/"+escape(name)+"/nodes", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// ListJobs lists the jobs that name a pool (GET /v1/node/pool/:name/jobs).
func (n *NodePools) ListJobs(name string, q *QueryOptions) ([]*JobListStub, *QueryMeta, error) {
	var out []*JobListStub
	qm, err := n.c.query("/v1/node/pool/"+escape(name)+"/jobs", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}
