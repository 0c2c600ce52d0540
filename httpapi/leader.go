package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// leaderWaiter is implemented by a Backend whose server may have no
// leader yet (the agent): consistent reads wait on it, and the
// X-Nomad-LastContact and X-Nomad-KnownLeader headers come from it. A
// Backend without it is taken to lead whenever LeaderHTTP is "".
type leaderWaiter interface {
	// AwaitLeader waits, bounded by the agent's hold timeout and ctx,
	// until a consistent read can be answered: here (elsewhere "") or by
	// the leader at HTTP address elsewhere. An error that says NoLeader
	// means none came in time.
	AwaitLeader(ctx context.Context) (elsewhere string, err error)
	// LastContact is how long ago the leader was last heard from (0 on
	// the leader) and whether one is known.
	LastContact() (since time.Duration, known bool)
}

// awaitLeader finds where a consistent read of r is answered: "" here,
// else the leader's HTTP address.
func (s *Server) awaitLeader(r *http.Request) (string, error) {
	if lw, ok := s.b.(leaderWaiter); ok {
		return lw.AwaitLeader(r.Context())
	}
	return s.b.LeaderHTTP(), nil
}

// proxyForRead passes a consistent read on to the leader, whose own
// X-Nomad-KnownLeader and X-Nomad-LastContact then describe the answer.
func proxyForRead(w http.ResponseWriter, r *http.Request, leader string) {
	w.Header().Del("X-Nomad-KnownLeader")
	w.Header().Del("X-Nomad-LastContact")
	ProxyTo(leader).ServeHTTP(w, r)
}

// isNoLeader recognises an error that says no leader came in time; it is
// answered as Nomad does, 500 "No cluster leader".
func isNoLeader(err error) bool {
	var nl interface{ NoLeader() bool }
	return errors.As(err, &nl) && nl.NoLeader()
}
