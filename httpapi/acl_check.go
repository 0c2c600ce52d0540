package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/acl"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/identity"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// ACL enforcement. With ACLs on, ServeHTTP resolves the request's token
// (X-Nomad-Token or Authorization: Bearer; none is the anonymous token,
// whose ACL is the "anonymous" policy's) and checks the route's need
// (acl_need.go) before any handler runs: a refusal is a 403 "Permission
// denied" that changes nothing (a job's registration is checked further
// for the volumes it mounts, acl_volumes.go). The checked request carries
// its ACL in its context, so lists and blocking queries keep only what
// the token may read (aclAllowsNs), and blocking queries and streams end
// when the token is deleted or expires. With ACLs off none of this runs:
// the only cost is a nil check.

var (
	errPermissionDenied = &HTTPError{Code: http.StatusForbidden, Msg: "Permission denied"}
	errTokenNotFound    = &HTTPError{Code: http.StatusForbidden, Msg: "ACL token not found"}
	errTokenExpired     = &HTTPError{Code: http.StatusForbidden, Msg: "ACL token expired"}
	errACLDisabled      = &HTTPError{Code: http.StatusBadRequest, Msg: "ACL support disabled"}
)

// anonymousPolicy is the policy that applies to requests with no token.
const anonymousPolicy = "anonymous"

// resolved is a token and its compiled ACL; token is nil for the
// anonymous one.
type resolved struct {
	acl   *acl.ACL
	token *messages.ACLToken
}

// aclResolver resolves secrets to ACLs, caching them until the ACL
// tables' index moves; on an agent without ACL state (remote set) it asks
// the servers (acl_remote.go).
type aclResolver struct {
	mu     sync.Mutex
	index  uint64
	cache  map[string]*resolved // by secret hash
	remote *remoteTokens
	// workloads checks workload identities where there is no keyring
	// (a client-only agent); nil elsewhere.
	workloads WorkloadSource
}

func newACLResolver(opts Options) *aclResolver {
	a := &aclResolver{cache: map[string]*resolved{}}
	if opts.Tokens != nil {
		a.remote = newRemoteTokens(opts.Tokens, opts.TokenTTL)
		a.workloads, _ = opts.Tokens.(WorkloadSource)
	}
	return a
}

// resolve finds the token whose secret is secret ("": anonymous) and
// compiles its policies, from snap or through the servers (a workload
// identity: its implicit rules, checked against snap's keyring or, with
// no snap, by the servers); an expired token is refused at now.
func (a *aclResolver) resolve(ctx context.Context, snap *state.Snap, secret string, now time.Time) (*resolved, error) {
	var res *resolved
	var err error
	switch {
	case identity.LooksLikeJWT(secret) && snap != nil:
		return resolveWorkload(snap, secret, now) // acl_identity.go
	case identity.LooksLikeJWT(secret) && a.workloads != nil:
		return resolveRemoteWorkload(ctx, a.workloads, secret) // acl_identity.go
	case a.remote != nil:
		res, err = a.remote.resolve(ctx, secret, now)
	default:
		res, err = a.resolveLocal(snap, secret)
	}
	if err != nil {
		return nil, err
	}
	if t := res.token; t != nil && t.ExpirationTime != 0 && t.ExpirationTime <= now.UnixNano() {
		return nil, errTokenExpired
	}
	return res, nil
}

func (a *aclResolver) resolveLocal(snap *state.Snap, secret string) (*resolved, error) {
	key := ""
	if secret != "" {
		key = string(state.HashSecret(secret))
	}
	idx := snap.Index(state.TableACLTokens, state.TableACLPolicies)
	a.mu.Lock()
	if idx != a.index {
		a.index, a.cache = idx, map[string]*resolved{}
	}
	res, ok := a.cache[key]
	a.mu.Unlock()
	if ok {
		return res, nil
	}
	res, err := compileToken(snap, secret)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	if idx == a.index {
		a.cache[key] = res
	}
	a.mu.Unlock()
	return res, nil
}

func compileToken(snap *state.Snap, secret string) (*resolved, error) {
	if secret == "" {
		return &resolved{acl: compilePolicies(snap, []string{anonymousPolicy})}, nil
	}
	t := snap.ACLTokenBySecret(secret)
	if t == nil {
		return nil, errTokenNotFound
	}
	if t.Type == state.ACLTokenManagement {
		return &resolved{acl: acl.Management, token: t}, nil
	}
	return &resolved{acl: compilePolicies(snap, t.Policies), token: t}, nil
}

// compilePolicies compiles the named policies that exist (stored rules
// parsed when they were written; one that no longer parses counts as
// none).
func compilePolicies(snap *state.Snap, names []string) *acl.ACL {
	var ps []*acl.Policy
	for _, n := range names {
		if p := snap.ACLPolicyByName(n); p != nil {
			if parsed, err := acl.Parse(p.Rules); err == nil {
				ps = append(ps, parsed)
			}
		}
	}
	return acl.Compile(ps...)
}

// tokenOf is the request's secret: X-Nomad-Token, else a bearer token.
func tokenOf(r *http.Request) string {
	if t := r.Header.Get(api.TokenHeader); t != "" {
		return t
	}
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

type aclKey struct{}

// aclReq is what a checked request carries in its context.
type aclReq struct {
	res    *resolved
	need   need
	secret string
}

func aclOf(r *http.Request) *aclReq {
	q, _ := r.Context().Value(aclKey{}).(*aclReq)
	return q
}

// authorize checks r against its route's need. It returns the request to
// serve (carrying its ACL) and what to run when it is done.
func (s *Server) authorize(r *http.Request) (*http.Request, func(), error) {
	_, pattern := s.mux.Handler(r)
	n, declared := routeNeeds[pattern]
	if !declared && pattern != "" {
		s.log.Warn("route declares no ACL need: management tokens only", "route", pattern)
		n = management()
	}
	snap := s.snapshot()
	if snap == nil && n.obj != nil {
		n.obj = s.localObjectNs(n)
	}
	secret := tokenOf(r)
	res, err := s.acls.resolve(r.Context(), snap, secret, s.b.Now())
	if err != nil {
		return nil, nil, err
	}
	if pattern != "" {
		setPathValues(r, pattern)
	}
	if !n.allows(res, snap, r) {
		return nil, nil, errPermissionDenied
	}
	q := &aclReq{res: res, need: n, secret: secret}
	r = r.WithContext(context.WithValue(r.Context(), aclKey{}, q))
	if !n.stream {
		return r, func() {}, nil
	}
	ctx, cancel := s.watchToken(r)
	return r.WithContext(ctx), cancel, nil
}

func (n need) allows(res *resolved, snap *state.Snap, r *http.Request) bool {
	a := res.acl
	switch n.kind {
	case needNone:
		return true
	case needToken:
		return res.token != nil
	case needManagement:
		return a.IsManagement()
	case needLevel:
		return n.level(a)
	case needNsAny:
		return a.AllowNamespace(r.PathValue("name"))
	case needEvents:
		return eventsAllowed(a, r)
	case needService:
		if r.URL.Query().Get("namespace") == allNamespaces {
			return true // the list keeps what the token may read
		}
		return a.AllowServiceRead(namespace(r))
	case needVariable:
		if r.Method == http.MethodGet && r.PathValue("path") == "" {
			// The list keeps what the token may list.
			return r.URL.Query().Get("namespace") == allNamespaces || a.AllowNamespace(namespace(r))
		}
		return a.AllowVariableOperation(namespace(r), r.PathValue("path"), n.cap)
	case needObject:
		if ns := n.obj(snap, r); ns != "" {
			return a.AllowNamespaceOperation(ns, n.cap)
		}
	}
	if r.URL.Query().Get("namespace") == allNamespaces {
		// Lists filter by namespace; a write names one namespace.
		return r.Method == http.MethodGet || a.IsManagement()
	}
	return a.AllowNamespaceOperation(namespace(r), n.cap)
}

// setPathValues sets the path values of pattern's wildcards from r's path
// (ServeMux sets them again when it dispatches).
func setPathValues(r *http.Request, pattern string) {
	_, p, _ := strings.Cut(pattern, " ")
	if p == "" {
		p = pattern
	}
	want := strings.Split(strings.Trim(p, "/"), "/")
	got := strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/")
	for i, seg := range want {
		if !strings.HasPrefix(seg, "{") || i >= len(got) {
			continue
		}
		name := strings.Trim(seg, "{}")
		val := got[i]
		if rest, ok := strings.CutSuffix(name, "..."); ok {
			name, val = rest, strings.Join(got[i:], "/")
		}
		if v, err := url.PathUnescape(val); err == nil {
			r.SetPathValue(name, v)
		}
	}
}

// aclAllowsNs reports whether a list answer may hold an object in
// namespace ns (true with ACLs off).
func aclAllowsNs(r *http.Request, ns string) bool {
	q := aclOf(r)
	if q == nil {
		return true
	}
	if q.need.kind == needService {
		return q.res.acl.AllowServiceRead(state.NamespaceOrDefault(ns))
	}
	c := q.need.cap
	if c == "" || q.need.kind == needVariable {
		c = acl.NsReadJob
	}
	return q.res.acl.AllowNamespaceOperation(state.NamespaceOrDefault(ns), c)
}

// aclAllowsVar reports whether a variable list may show the variable at
// path in namespace ns.
func aclAllowsVar(r *http.Request, ns, path string) bool {
	q := aclOf(r)
	return q == nil || q.res.acl.AllowVariableOperation(state.NamespaceOrDefault(ns), path, acl.VarList)
}

// aclAllowsNamespace reports whether a namespace list may show ns.
func aclAllowsNamespace(r *http.Request, ns string) bool {
	q := aclOf(r)
	return q == nil || q.res.acl.AllowNamespace(ns)
}

// aclCheckNs checks the request's namespace capability against the
// namespace a write really goes to (a job's or volume's own, when the
// request names none).
func aclCheckNs(r *http.Request, ns string) error {
	q := aclOf(r)
	if q == nil || q.res.acl.AllowNamespaceOperation(state.NamespaceOrDefault(ns), q.need.cap) {
		return nil
	}
	return errPermissionDenied
}

// aclWatch is the context a blocking query waits with: r's, ended early
// when the request's token is deleted or expires.
func (s *Server) aclWatch(r *http.Request) (context.Context, context.CancelFunc) {
	if aclOf(r) == nil {
		return r.Context(), func() {}
	}
	return s.watchToken(r)
}

// aclRecheck refuses a request whose token went away while it waited (a
// workload identity: whose allocation stopped).
func (s *Server) aclRecheck(r *http.Request) error {
	q := aclOf(r)
	if q == nil || q.res.token == nil && !q.res.acl.IsWorkload() {
		return nil
	}
	_, err := s.acls.resolve(r.Context(), s.snapshot(), q.secret, s.b.Now())
	return err
}

// watchToken returns a context that ends with r's, or when r's token is
// deleted or expires.
func (s *Server) watchToken(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	q := aclOf(r)
	if q == nil || q.res.token == nil {
		return ctx, cancel
	}
	if exp := q.res.token.ExpirationTime; exp != 0 {
		t := time.AfterFunc(time.Duration(exp-s.b.Now().UnixNano()), cancel)
		context.AfterFunc(ctx, func() { t.Stop() })
	}
	if s.acls.remote != nil {
		s.watchRemoteToken(ctx, cancel, q.secret)
		return ctx, cancel
	}
	store, id := s.b.Store(), q.res.token.AccessorID
	go func() {
		idx := store.Snapshot().Index(state.TableACLTokens)
		for ctx.Err() == nil {
			if store.Snapshot().ACLTokenByAccessor(id) == nil {
				cancel()
				return
			}
			idx = store.Wait(ctx, idx, state.TableACLTokens)
		}
	}()
	return ctx, cancel
}
