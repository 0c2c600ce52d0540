package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
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
	p := reverseProxy(r, leader)
	// Called only when no response came (the reverse proxy has written
	// nothing yet).
	p.ErrorHandler = func(_ http.ResponseWriter, _ *http.Request, err error) { failed = err }
	hopCounted(leader, p).ServeHTTP(w, r)
	return failed
}

// appliedWait bounds how long a forwarded write's answer waits for this
// server's replica, as the agent's forwarded commands do.
const appliedWait = 5 * time.Second

// writeToLeader is toLeader for a write: the leader's answer is passed
// back once this server's replica has applied the raft index it names
// (X-Nomad-Index), so that a ?stale read here then sees the write.
//
// A write that reads the state before it proposes waits, as a consistent
// read does, for a leader whose store is caught up; when none comes in
// time it is answered here (500 "No cluster leader"). A leader that cannot
// be dialled (killed, before raft here noticed) never saw the write: it
// goes to the next leader.
func (s *Server) writeToLeader(w http.ResponseWriter, r *http.Request) bool {
	var body []byte
	unreachable := ""
	for {
		leader, err := s.awaitLeader(r, unreachable)
		if err != nil {
			s.writeError(w, r, err)
			return true
		}
		if body != nil { // sent once already: the handler, or the next try, reads it again
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		if leader == "" {
			return false
		}
		if body == nil {
			if body, err = io.ReadAll(r.Body); err != nil {
				s.writeError(w, r, err)
				return true
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		if err := s.proxyWrite(w, r, leader); err == nil {
			return true
		}
		s.log.Debug("write: leader unreachable, waiting for another", "leader", leader, "error", err)
		unreachable = leader
	}
}

// proxyWrite passes the write r on to the leader (see writeToLeader). It
// answers the error, writing nothing, when the leader could not be
// dialled; any other failure is a 502.
func (s *Server) proxyWrite(w http.ResponseWriter, r *http.Request, leader string) error {
	var undialled error
	p := reverseProxy(r, leader)
	p.ModifyResponse = func(resp *http.Response) error {
		index, err := strconv.ParseUint(resp.Header.Get("X-Nomad-Index"), 10, 64)
		store := s.b.Store()
		if err != nil || store == nil || resp.StatusCode >= 300 {
			return nil // nothing written, or nothing to wait for
		}
		// At most appliedWait, and the leader's answer either way: the
		// write is committed, and an error would make the client write
		// it again.
		ctx, cancel := context.WithTimeout(resp.Request.Context(), appliedWait)
		defer cancel()
		if err := store.WaitApplied(ctx, index); err != nil {
			s.log.Warn("answering a forwarded write this server has not applied yet", "index", index, "error", err)
		}
		return nil
	}
	p.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			undialled = err
			return
		}
		s.log.Warn("write: passing on to the leader failed", "leader", leader, "error", err)
		http.Error(w, fmt.Sprintf("passing the write on to leader %s: %v", leader, err), http.StatusBadGateway)
	}
	hopCounted(leader, p).ServeHTTP(w, r)
	return undialled
}

// isNoLeader recognises an error that says no leader came in time; it is
// answered as Nomad does, 500 "No cluster leader".
func isNoLeader(err error) bool {
	var nl interface{ NoLeader() bool }
	return errors.As(err, &nl) && nl.NoLeader()
}

// reverseProxy passes r on to the agent at addr as the request's
// WithProxyTransport says: HTTPS with this agent's certificate when the
// API is HTTPS, else plain HTTP.
func reverseProxy(r *http.Request, addr string) *httputil.ReverseProxy {
	scheme, rt := "http", http.RoundTripper(nil)
	if pt, ok := r.Context().Value(proxyKey{}).(proxyTransport); ok {
		scheme, rt = pt.scheme, pt.rt
	}
	p := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: scheme, Host: addr})
	p.Transport = rt
	return p
}
