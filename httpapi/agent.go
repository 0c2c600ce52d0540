package httpapi

import (
	"errors"
	"net/http"
)

func (s *Server) agentSelf(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.b.Self(), nil
}

func (s *Server) agentMembers(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.b.Members(), nil
}

func (s *Server) statusLeader(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.b.Leader(), nil
}

func (s *Server) statusPeers(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.b.Peers()
}

func (s *Server) raftConfig(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.b.RaftConfiguration()
}

// ErrUnknownNode is what ActorTree returns for a node it cannot reach.
var ErrUnknownNode = errors.New("httpapi: unknown node")

func (s *Server) actors(w http.ResponseWriter, r *http.Request) (any, error) {
	tree, err := s.b.ActorTree(r.Context(), r.URL.Query().Get("node"))
	if errors.Is(err, ErrUnknownNode) {
		return nil, codeErr(http.StatusNotFound, "%v", err)
	}
	return tree, err
}
