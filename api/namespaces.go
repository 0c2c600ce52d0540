package api

import (
	"net/http"

	"github.com/troupe-dev/troupe/messages"
)

// Namespaces is the /v1/namespaces and /v1/namespace/:name family.
type Namespaces struct{ c *Client }

// Namespaces returns the namespace endpoints.
func (c *Client) Namespaces() *Namespaces { return &Namespaces{c: c} }

// List lists namespaces by name, those starting with q.Prefix when it is
// set (GET /v1/namespaces).
func (n *Namespaces) List(q *QueryOptions) ([]*messages.Namespace, *QueryMeta, error) {
	var out []*messages.Namespace
	qm, err := n.c.query("/v1/namespaces", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Info reads one namespace (GET /v1/namespace/:name).
func (n *Namespaces) Info(name string, q *QueryOptions) (*messages.Namespace, *QueryMeta, error) {
	var out messages.Namespace
	qm, err := n.c.query("/v1/namespace/"+escape(name), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Register creates a namespace or replaces its description and meta (PUT
// /v1/namespace).
func (n *Namespaces) Register(ns *messages.Namespace, w *WriteOptions) (*WriteMeta, error) {
	return n.c.write(http.MethodPut, "/v1/namespace", ns, nil, w)
}

// Delete deletes a namespace that has no job that is not dead and no
// volume (DELETE /v1/namespace/:name).
func (n *Namespaces) Delete(name string, w *WriteOptions) (*WriteMeta, error) {
	return n.c.write(http.MethodDelete, "/v1/namespace/"+escape(name), nil, nil, w)
}
