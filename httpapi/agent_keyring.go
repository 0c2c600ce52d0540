package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// KeyringResponse is Nomad's answer to a gossip keyring operation: the
// errors by node name, the installed keys with how many nodes hold each
// (list), and how many nodes were asked.
type KeyringResponse struct {
	Messages map[string]string
	Keys     map[string]int
	NumNodes int
}

// KeyringRequest is Nomad's body of install, use and remove.
type KeyringRequest struct {
	Key string
}

// Gossip keyring operations.
const (
	KeyringList    = "list"
	KeyringInstall = "install"
	KeyringUse     = "use"
	KeyringRemove  = "remove"
)

// GossipKeyring is what a backend offers for /v1/agent/keyring: op on
// every member of the gossip pool, or on this agent only (local, the
// fan-out's own calls). A bad key or operation is an *HTTPError 400.
type GossipKeyring interface {
	GossipKeyring(ctx context.Context, op, key string, local bool) (*KeyringResponse, error)
}

func (s *Server) gossipKeyringRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /v1/agent/keyring/list", s.wrap(s.gossipKeyring))
	for _, method := range []string{"PUT ", "POST "} {
		m.HandleFunc(method+"/v1/agent/keyring/install", s.wrap(s.gossipKeyring))
		m.HandleFunc(method+"/v1/agent/keyring/use", s.wrap(s.gossipKeyring))
		m.HandleFunc(method+"/v1/agent/keyring/remove", s.wrap(s.gossipKeyring))
	}
}

// gossipKeyring handles /v1/agent/keyring/{list,install,use,remove}
// (?local=true: this agent only).
func (s *Server) gossipKeyring(w http.ResponseWriter, r *http.Request) (any, error) {
	kr, ok := s.b.(GossipKeyring)
	if !ok {
		return nil, codeErr(http.StatusNotImplemented, "this agent has no gossip keyring")
	}
	op := strings.TrimPrefix(r.URL.Path, "/v1/agent/keyring/")
	var req KeyringRequest
	if op != KeyringList {
		if err := decodeBody(r, &req); err != nil {
			return nil, err
		}
		if req.Key == "" {
			return nil, codeErr(http.StatusBadRequest, "the request names no Key")
		}
	}
	return kr.GossipKeyring(r.Context(), op, req.Key, boolParam(r, "local"))
}

// CallKeyring sends one keyring operation to the agent whose API is at
// base ("https://host:4646"): GET .../list, or PUT .../op with the key;
// local applies it to that agent only (the fan-out's calls). token is the
// ACL secret sent as X-Nomad-Token ("": none). A non-200 answer is an
// error with its status and body.
func CallKeyring(ctx context.Context, hc *http.Client, base, op, key, token string, local bool) (*KeyringResponse, error) {
	method, body := http.MethodGet, []byte(nil)
	if op != KeyringList {
		method = http.MethodPut
		body, _ = json.Marshal(KeyringRequest{Key: key})
	}
	url := strings.TrimRight(base, "/") + "/v1/agent/keyring/" + op
	if local {
		url += "?local=true"
	}
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("X-Nomad-Token", token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	buf, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(buf)))
	}
	var out KeyringResponse
	if err := json.Unmarshal(buf, &out); err != nil {
		return nil, fmt.Errorf("keyring answer: %w", err)
	}
	return &out, nil
}
