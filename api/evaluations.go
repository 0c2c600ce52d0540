package api

import "github.com/troupe-dev/troupe/messages"

// Evaluations is the /v1/evaluations and /v1/evaluation/:id family.
type Evaluations struct{ c *Client }

// Evaluations returns the evaluation endpoints.
func (c *Client) Evaluations() *Evaluations { return &Evaluations{c: c} }

// List lists evaluations (GET /v1/evaluations).
func (e *Evaluations) List(q *QueryOptions) ([]*messages.Evaluation, *QueryMeta, error) {
	var out []*messages.Evaluation
	qm, err := e.c.query("/v1/evaluations", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Info reads one evaluation (GET /v1/evaluation/:id).
func (e *Evaluations) Info(id string, q *QueryOptions) (*messages.Evaluation, *QueryMeta, error) {
	var out messages.Evaluation
	qm, err := e.c.query("/v1/evaluation/"+escape(id), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}
