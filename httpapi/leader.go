package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// leaderWaiter is implemented by a Backend whose server may have no
// leader yet (the agent): consistent reads wait on it, and the
// X-Nomad-LastContact and X-Nomad-KnownLeader headers come from it. A
// Backend without it is taken to lead whenever LeaderHTTP is "".
type leaderWaiter interface {
	// AwaitLeader waits, bounded by the agent's hold timeout and ctx,
	// until a consistent read can be answered: here (elsewhere "") or by
	// the leader at HTTP address elsewhere, never unreachable (a leader
	// a read could not reach: raft here may name a dead leader for a
	// heartbeat timeout). An error that says NoLeader means none came in
	// time.
	AwaitLeader(ctx context.Context, unreachable string) (elsewhere string, err error)
	// LastContact is how long ago the leader was last heard from (0 on
	// the leader) and whether one is known.
	LastContact() (since time.Duration, known bool)
}

// awaitLeader finds where a consistent read of r is answered: "" here,
// else the leader's HTTP address (other than unreachable).
func (s *Server) awaitLeader(r *http.Request, unreachable string) (string, error) {
	if lw, ok := s.b.(leaderWaiter); ok {
		return lw.AwaitLeader(r.Context(), unreachable)
	}
	return s.b.LeaderHTTP(), nil
}

// readAtLeader finds where the consistent read r is answered, waiting for
// a leader when there is none. It reports true when it passed r on to the
// leader, which answered; false when this server, a ready leader, answers.
// A leader that cannot be reached (killed, before raft here noticed) is
// not an answer: a read is safe to send twice, so r waits for the next.
func (s *Server) readAtLeader(w http.ResponseWriter, r *http.Request) (bool, error) {
	unreachable := ""
	for {
		leader, err := s.awaitLeader(r, unreachable)
		if err != nil || leader == "" {
			return false, err
		}
		err = proxyForRead(w, r, leader)
		if err == nil {
			return true, nil
		}
		s.log.Debug("consistent read: leader unreachable, waiting for another", "leader", leader, "error", err)
		unreachable = leader
	}
}

// proxyForRead passes a consistent read on to the leader, whose own
// X-Nomad-KnownLeader and X-Nomad-LastContact then describe the answer.
// It answers the error when the leader could not be asked (nothing is
// written to w then).
func proxyForRead(w http.ResponseWriter, r *http.Request, leader string) error {
	w.Header().Del("X-Nomad-KnownLeader")
	w.Header().Del("X-Nomad-LastContact")
	var failed error
	p := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: leader})
	// Called only when no response came (the reverse proxy has written
	// nothing yet).
	p.ErrorHandler = func(_ http.ResponseWriter, _ *http.Request, err error) { failed = err }
	hopCounted(leader, p).ServeHTTP(w, r)
	return failed
}

// isNoLeader recognises an error that says no leader came in time; it is
// answered as Nomad does, 500 "No cluster leader".
func isNoLeader(err error) bool {
	var nl interface{ NoLeader() bool }
	return errors.As(err, &nl) && nl.NoLeader()
}
