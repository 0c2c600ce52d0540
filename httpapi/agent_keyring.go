package httpapi

import (
	"context"
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
