package api

import (
	"errors"
	"net/http"
	"net/url"
)

// Agent is the /v1/agent family.
type Agent struct{ c *Client }

// Agent returns the agent endpoints.
func (c *Client) Agent() *Agent { return &Agent{c: c} }

// Self describes the agent answering (GET /v1/agent/self).
func (a *Agent) Self() (*AgentSelf, error) {
	var out AgentSelf
	if _, err := a.c.query("/v1/agent/self", &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// Members lists the gossip members of the servers (GET /v1/agent/members).
func (a *Agent) Members() (*ServerMembers, error) {
	var out ServerMembers
	if _, err := a.c.query("/v1/agent/members", &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// Status is the /v1/status family.
type Status struct{ c *Client }

// Status returns the status endpoints.
func (c *Client) Status() *Status { return &Status{c: c} }

// NoLeaderBody is what GET /v1/status/leader answers, with a 500, while
// there is no leader (Nomad's words, which its CLI looks for).
const NoLeaderBody = "No cluster leader"

// Leader is the raft leader's RPC address, "" when none is known
// (GET /v1/status/leader, whose 500 "No cluster leader" it reads as "").
func (s *Status) Leader() (string, error) {
	var out string
	if _, err := s.c.query("/v1/status/leader", &out, nil); err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.StatusCode == http.StatusInternalServerError && ae.Body == NoLeaderBody {
			return "", nil
		}
		return "", err
	}
	return out, nil
}

// Peers lists the raft peers' addresses (GET /v1/status/peers).
func (s *Status) Peers() ([]string, error) {
	var out []string
	if _, err := s.c.query("/v1/status/peers", &out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// Operator is the /v1/operator family.
type Operator struct{ c *Client }

// Operator returns the operator endpoints.
func (c *Client) Operator() *Operator { return &Operator{c: c} }

// RaftGetConfiguration lists the raft servers
// (GET /v1/operator/raft/configuration).
func (o *Operator) RaftGetConfiguration(q *QueryOptions) (*RaftConfiguration, error) {
	var out RaftConfiguration
	if _, err := o.c.query("/v1/operator/raft/configuration", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}

// Actors is the /v1/actors endpoint.
type Actors struct{ c *Client }

// Actors returns the actor-tree endpoint.
func (c *Client) Actors() *Actors { return &Actors{c: c} }

// Tree lists the live actors of a node (GET /v1/actors?node=ID); nodeID ""
// means the agent answering.
func (a *Actors) Tree(nodeID string) (*ActorTree, error) {
	q := &QueryOptions{}
	if nodeID != "" {
		q.Params = map[string]string{"node": nodeID}
	}
	var out ActorTree
	if _, err := a.c.query("/v1/actors", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}

// RaftRemovePeer removes a raft peer by ID (DELETE /v1/operator/raft/peer).
func (o *Operator) RaftRemovePeer(id string, w *WriteOptions) error {
	_, err := o.c.writeParams(http.MethodDelete, "/v1/operator/raft/peer", url.Values{"id": {id}}, nil, nil, w)
	return err
}
