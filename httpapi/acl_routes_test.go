package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
)

// aclBackend is an fsmBackend with a clock the test moves.
type aclBackend struct {
	*fsmBackend
	now atomic.Int64
}

func (b *aclBackend) Now() time.Time { return time.Unix(0, b.now.Load()) }

// aclServer is an API with ACLs on over a real FSM, bootstrapped: it
// returns the management token's secret.
func aclServer(t *testing.T, resetFile string) (*Server, *aclBackend, string) {
	t.Helper()
	b := &aclBackend{fsmBackend: newFSMBackend()}
	b.now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	s := New(b, nil, Options{ACLEnabled: true, ACLResetFile: resetFile})
	rec := aclDo(t, s, "POST", "/v1/acl/bootstrap", "", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var tok api.ACLToken
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &tok))
	require.NotEmpty(t, tok.SecretID)
	return s, b, tok.SecretID
}

func aclDo(t *testing.T, s *Server, method, path, token string, body any) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, aclRequest(t, method, path, token, body))
	return rec
}

// aclRequest is a request with body as JSON and token, when not "".
func aclRequest(t *testing.T, method, path, token string, body any) *http.Request {
	t.Helper()
	var buf bytes.Buffer
	if body != nil {
		require.NoError(t, json.NewEncoder(&buf).Encode(body))
	}
	r := httptest.NewRequest(method, path, &buf)
	if token != "" {
		r.Header.Set("X-Nomad-Token", token)
	}
	return r
}

// clientToken makes a client token with one new policy of rules and
// returns its secret.
func clientToken(t *testing.T, s *Server, mgmt, name, rules string) string {
	t.Helper()
	rec := aclDo(t, s, "POST", "/v1/acl/policy/"+name, mgmt, &api.ACLPolicy{Name: name, Rules: rules})
	require.Equal(t, http.StatusOK, rec.Code, "policy %s: %s", rules, rec.Body.String())
	rec = aclDo(t, s, "POST", "/v1/acl/token", mgmt, &api.ACLToken{Name: name, Type: "client", Policies: []string{name}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var tok api.ACLToken
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &tok))
	return tok.SecretID
}

// allowRules is a policy that grants n (management: "").
func allowRules(n need) string {
	switch n.kind {
	case needNamespace, needObject, needEvents, needService:
		return fmt.Sprintf(`namespace "default" { capabilities = [%q] }`, n.cap)
	case needVariable:
		return fmt.Sprintf("namespace \"default\" {\n variables {\n path \"*\" { capabilities = [%q] }\n }\n}", n.cap)
	case needNsAny:
		return `namespace "default" { policy = "read" }`
	case needLevel:
		return n.rule
	}
	return ""
}

// routeRequest is a request for pattern, its wildcards filled in.
func routeRequest(pattern, token string) *http.Request {
	method, path, _ := strings.Cut(pattern, " ")
	path = strings.TrimSuffix(path, "{$}") // "/{$}" is exactly "/"
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") {
			val := "default"
			if strings.HasSuffix(seg, "...}") {
				val = "default/x"
			}
			path = strings.Replace(path, seg, val, 1)
		}
	}
	r := httptest.NewRequest(method, path, strings.NewReader("{}"))
	if token != "" {
		r.Header.Set("X-Nomad-Token", token)
	}
	return r
}

// TestACLRouteTable checks every route the package registers (read from
// its registration code) against its declared need: a token granted just
// that need passes the check, a token granted something else and no
// token are refused with 403 "Permission denied", and the refusals change
// nothing. A route without a declared need fails here, by name.
func TestACLRouteTable(t *testing.T) {
	s, b, mgmt := aclServer(t, "")
	denied := clientToken(t, s, mgmt, "elsewhere", `namespace "other" { policy = "write" }
node { policy = "deny" }`)
	routes := registeredRoutes(t)
	require.NotEmpty(t, routes)
	registered := map[string]bool{}
	for _, p := range routes {
		registered[p] = true
	}
	for p := range routeNeeds {
		if !registered[p] {
			t.Errorf("routeNeeds declares %q, which no code registers", p)
		}
	}
	for i, pattern := range routes {
		n, ok := routeNeeds[pattern]
		if !ok {
			t.Errorf("route %q declares no ACL need: add it to routeNeeds in acl_need.go", pattern)
			continue
		}
		t.Run(pattern, func(t *testing.T) {
			allowed := mgmt
			if rules := allowRules(n); rules != "" {
				allowed = clientToken(t, s, mgmt, fmt.Sprintf("route-%d", i), rules)
			}
			if n.kind == needToken {
				allowed = denied
			}
			if n.kind != needNone {
				_, done, err := s.authorize(routeRequest(pattern, allowed))
				require.NoError(t, err, "the allowed token is refused")
				done()
			}
			if n.kind == needNone {
				_, done, err := s.authorize(routeRequest(pattern, ""))
				require.NoError(t, err, "a route open to all refuses no token")
				done()
				return
			}
			tokens := map[string]string{"no token": ""}
			if n.kind != needToken {
				tokens["denied token"] = denied
			}
			for what, tok := range tokens {
				before := b.Store().Snapshot().Index()
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, routeRequest(pattern, tok))
				require.Equal(t, http.StatusForbidden, rec.Code, "%s: %s", what, rec.Body.String())
				require.Equal(t, "Permission denied", strings.TrimSpace(rec.Body.String()), what)
				require.Equal(t, before, b.Store().Snapshot().Index(), "%s changed the state", what)
			}
		})
	}
}

// TestACLRouteTableOff: with ACLs off no route checks a token and the ACL
// endpoints say ACLs are off.
func TestACLRouteTableOff(t *testing.T) {
	s := New(newFSMBackend(), nil, Options{})
	require.Nil(t, s.acls)
	rec := aclDo(t, s, "GET", "/v1/jobs", "", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = aclDo(t, s, "POST", "/v1/acl/bootstrap", "", nil)
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Contains(t, rec.Body.String(), "ACL support disabled")
}
