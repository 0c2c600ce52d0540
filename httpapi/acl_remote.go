package httpapi

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/acl"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// An agent that keeps no ACL state (a client-only agent) resolves tokens
// through the servers (Options.Tokens), as Nomad's clients do, and keeps
// each answer for Options.TokenTTL (never past the token's expiry). When
// no server answers it fails closed: the request is refused.

// TokenSource resolves tokens for an agent that keeps no ACL state.
// ResolveToken answers the token whose secret hashes to hash (an empty
// hash: the anonymous token, answered as nil) and the policies it names
// that exist; ErrACLTokenNotFound for an unknown secret. Any other error
// means no server answered.
type TokenSource interface {
	ResolveToken(ctx context.Context, hash []byte) (*messages.ACLToken, []*messages.ACLPolicy, error)
}

// ErrACLTokenNotFound is what a TokenSource returns for an unknown secret.
var ErrACLTokenNotFound = errors.New("httpapi: ACL token not found")

// DefaultTokenTTL is how long a client keeps a resolved token (Nomad's
// client acl token_ttl default).
const DefaultTokenTTL = 30 * time.Second

// resolveTimeout bounds one resolution through the servers.
const resolveTimeout = 10 * time.Second

var errNoTokenSource = &HTTPError{Code: http.StatusServiceUnavailable, Msg: "ACL token could not be resolved: no server answered"}

// remoteTokens is a TokenSource with a cache.
type remoteTokens struct {
	src   TokenSource
	ttl   time.Duration
	mu    sync.Mutex
	cache map[string]remoteEntry // by secret hash
}

type remoteEntry struct {
	res   *resolved
	until time.Time
}

func newRemoteTokens(src TokenSource, ttl time.Duration) *remoteTokens {
	if ttl <= 0 {
		ttl = DefaultTokenTTL
	}
	return &remoteTokens{src: src, ttl: ttl, cache: map[string]remoteEntry{}}
}

// resolve answers the cached resolution of secret, or asks the servers.
func (rt *remoteTokens) resolve(ctx context.Context, secret string, now time.Time) (*resolved, error) {
	var hash []byte
	if secret != "" {
		hash = state.HashSecret(secret)
	}
	key := string(hash)
	rt.mu.Lock()
	e, ok := rt.cache[key]
	if ok && !now.Before(e.until) {
		delete(rt.cache, key)
		ok = false
	}
	rt.mu.Unlock()
	if ok {
		return e.res, nil
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	tok, policies, err := rt.src.ResolveToken(ctx, hash)
	switch {
	case errors.Is(err, ErrACLTokenNotFound):
		rt.forget(key)
		return nil, errTokenNotFound
	case err != nil:
		return nil, errNoTokenSource
	case secret != "" && tok == nil:
		return nil, errTokenNotFound
	}
	res := &resolved{token: tok, acl: compileRemote(tok, policies)}
	until := now.Add(rt.ttl)
	if tok != nil && tok.ExpirationTime != 0 {
		until = minTime(until, time.Unix(0, tok.ExpirationTime))
	}
	rt.mu.Lock()
	rt.cache[key] = remoteEntry{res: res, until: until}
	rt.mu.Unlock()
	return res, nil
}

func (rt *remoteTokens) forget(key string) {
	rt.mu.Lock()
	delete(rt.cache, key)
	rt.mu.Unlock()
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// compileRemote compiles a resolved token's policies (a management
// token's ACL is management's).
func compileRemote(tok *messages.ACLToken, policies []*messages.ACLPolicy) *acl.ACL {
	if tok != nil && tok.Type == state.ACLTokenManagement {
		return acl.Management
	}
	var ps []*acl.Policy
	for _, p := range policies {
		if parsed, err := acl.Parse(p.Rules); err == nil {
			ps = append(ps, parsed)
		}
	}
	return acl.Compile(ps...)
}

// watchRemoteToken ends ctx when a re-resolution, every TTL, refuses the
// token (deleted, or no server answers: fail closed).
func (s *Server) watchRemoteToken(ctx context.Context, cancel context.CancelFunc, secret string) {
	tick := time.NewTicker(s.acls.remote.ttl)
	go func() {
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if _, err := s.acls.remote.resolve(ctx, secret, s.b.Now()); err != nil && ctx.Err() == nil {
					cancel()
					return
				}
			}
		}
	}()
}

// snapshot is the state's snapshot, nil on an agent that keeps none.
func (s *Server) snapshot() *state.Snap {
	if st := s.b.Store(); st != nil {
		return st.Snapshot()
	}
	return nil
}

// localObjectNs finds the namespace of the allocation a route names in
// what this agent runs (a client-only agent has no state to look in);
// other objects are looked up by the servers the request goes on to.
func (s *Server) localObjectNs(n need) func(*state.Snap, *http.Request) string {
	return func(_ *state.Snap, r *http.Request) string {
		if !n.alloc {
			return ""
		}
		return s.allocNamespace(nil, allocIDOf(r)) // actors_acl.go
	}
}

// ResolveACL resolves secret ("": the anonymous token) to its ACL as the
// API's own requests are (for the RPC transport's checks); a nil ACL and
// no error when ACLs are off.
func (s *Server) ResolveACL(ctx context.Context, secret string) (*acl.ACL, error) {
	if s.acls == nil {
		return nil, nil
	}
	res, err := s.acls.resolve(ctx, s.snapshot(), secret, s.b.Now())
	if err != nil {
		return nil, err
	}
	return res.acl, nil
}
