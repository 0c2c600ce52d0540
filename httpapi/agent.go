package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/troupe-dev/troupe/api"
)

func (s *Server) agentSelf(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.b.Self(), nil
}

// agentMembers answers /v1/agent/members. Gossip is no raft state, but
// a blocking read (?index=) waits on the store as storeBlock says, so
// that a page that follows the servers reads them again when the store
// moves or ?wait= passes.
func (s *Server) agentMembers(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.storeBlock(w, r); err != nil {
		return nil, err
	}
	return s.b.Members(), nil
}

// statusLeader answers the leader's RPC address, or a 500 "No cluster
// leader" (as Nomad) while there is none.
func (s *Server) statusLeader(w http.ResponseWriter, r *http.Request) (any, error) {
	if l := s.b.Leader(); l != "" {
		return l, nil
	}
	return nil, codeErr(http.StatusInternalServerError, "%s", api.NoLeaderBody)
}

func (s *Server) statusPeers(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.b.Peers()
}

// raftConfig answers /v1/operator/raft/configuration; a blocking read
// (?index=) waits on the store as storeBlock says (a peer added or
// removed moves raft's configuration, not the store: a client that
// follows the peers bounds its wait and compares what it read).
func (s *Server) raftConfig(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.storeBlock(w, r); err != nil {
		return nil, err
	}
	return s.b.RaftConfiguration()
}

// storeBlock is the blocking read of an answer that is no raft state
// but changes as the state does (the actor tree, the servers): with
// ?index= it waits until any table of the store passes index, ?wait=
// passes, or the request's token goes (then it answers 403), and it
// sets X-Nomad-Index to the store's index. An agent without a store (a
// client only) answers at once, with index 1.
func (s *Server) storeBlock(w http.ResponseWriter, r *http.Request) error {
	store := s.b.Store()
	if store == nil {
		setIndex(w, 1)
		return nil
	}
	if opts := optsOf(r); opts.index > 0 {
		watch, stop := s.aclWatch(r) // ends when the token goes
		ctx, cancel := context.WithTimeout(watch, opts.wait)
		store.Wait(ctx, opts.index)
		cancel()
		stop()
		if err := s.aclRecheck(r); err != nil {
			return err
		}
	}
	setIndex(w, max(store.Snapshot().Index(), 1))
	return nil
}

// clientStats handles GET /v1/client/stats[?node_id=]: a client's host
// and device usage. A request for another node is passed on to that
// node's agent, as logs are.
func (s *Server) clientStats(w http.ResponseWriter, r *http.Request) (any, error) {
	stats, elsewhere, err := s.b.ClientStats(r.Context(), r.URL.Query().Get("node_id"))
	switch {
	case errors.Is(err, ErrUnknownNode):
		return nil, codeErr(http.StatusNotFound, "%v", err)
	case errors.Is(err, ErrNoClient):
		return nil, codeErr(http.StatusBadRequest, "%v", err)
	case err != nil:
		return nil, err
	case elsewhere != "":
		ProxyTo(elsewhere).ServeHTTP(w, r)
		return nil, errProxied
	}
	return stats, nil
}

// actors handles GET /v1/actors?node=, the live actor tree. The tree is
// no raft state, but actors start and stop, and change phase, as the
// state changes: with ?index= it is a blocking query on the whole store
// (waiting until any table passes index, or ?wait= passes), answered
// with the store's index in X-Nomad-Index. Counters (mailbox, messages)
// move between changes: a client that wants them fresh sets a short wait.
func (s *Server) actors(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.storeBlock(w, r); err != nil {
		return nil, err
	}
	tree, err := s.b.ActorTree(r.Context(), r.URL.Query().Get("node"))
	if errors.Is(err, ErrUnknownNode) {
		return nil, codeErr(http.StatusNotFound, "%v", err)
	}
	s.filterActorTree(r, tree) // actors_acl.go
	return tree, err
}

// removePeer handles DELETE /v1/operator/raft/peer?id=: on the leader it
// removes the server (never the last voter); a follower passes it on to
// the leader.
func (s *Server) removePeer(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if id == "" {
		s.writeError(w, r, codeErr(http.StatusBadRequest, "missing ?id= of the raft peer to remove"))
		return
	}
	if s.toLeader(w, r) {
		return
	}
	s.wrap(func(http.ResponseWriter, *http.Request) (any, error) {
		if err := s.b.RemoveRaftPeer(id); err != nil {
			return nil, codeErr(http.StatusBadRequest, "%v", err)
		}
		return map[string]string{"Removed": id}, nil
	})(w, r)
}
