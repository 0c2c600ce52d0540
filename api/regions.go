package api

import (
	"errors"
	"net/http"
	"net/url"
)

// JoinResponse is PUT /v1/agent/join's answer (Nomad's shape).
type JoinResponse struct {
	NumJoined int    `json:"num_joined"`
	Error     string `json:"error"`
}

// Join makes the agent, a server, join the WAN pool of every region's
// servers through the given addresses (PUT /v1/agent/join): it returns how
// many answered, and an error when the agent reported one.
func (a *Agent) Join(addrs ...string) (int, error) {
	var out JoinResponse
	if _, err := a.c.writeParams(http.MethodPut, "/v1/agent/join", url.Values{"address": addrs}, nil, &out, nil); err != nil {
		return 0, err
	}
	if out.Error != "" {
		return out.NumJoined, errors.New(out.Error)
	}
	return out.NumJoined, nil
}

// Regions lists the regions of the federation, sorted (GET /v1/regions).
type Regions struct{ c *Client }

// Regions returns the regions endpoint.
func (c *Client) Regions() *Regions { return &Regions{c: c} }

// List lists the region names.
func (r *Regions) List() ([]string, error) {
	var out []string
	if _, err := r.c.query("/v1/regions", &out, nil); err != nil {
		return nil, err
	}
	return out, nil
}
