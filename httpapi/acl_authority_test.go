package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// regionsFed answers requests for the regions it holds with their
// handlers, recording each request it passes on; any other region has no
// path.
type regionsFed struct {
	handlers  map[string]http.Handler
	forwarded []string // "REGION METHOD URI from=HEADER"
}

func (f *regionsFed) Regions() []string                   { return []string{"east", "west"} }
func (f *regionsFed) JoinWAN(addrs []string) (int, error) { return 0, nil }

func (f *regionsFed) RegionHandler(region string) (http.Handler, error) {
	h, ok := f.handlers[region]
	if !ok {
		return nil, fmt.Errorf("%w %q: no server of it is known", ErrNoRegionPath, region)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.forwarded = append(f.forwarded, fmt.Sprintf("%s %s %s from=%s", region, r.Method, r.URL.RequestURI(), r.Header.Get(ACLAuthorityHeader)))
		h.ServeHTTP(w, r)
	}), nil
}

// acls are two regions' APIs over their own FSMs: east is authoritative
// (bootstrapped, with policy "readonly"), west names it so and reaches it
// through fed.
type acls struct {
	east, west *Server
	eb, wb     *aclBackend
	fed        *regionsFed
	mgmt       string // east's bootstrap secret, replicated to west
}

func newACLRegions(t *testing.T) *acls {
	t.Helper()
	f := &acls{eb: &aclBackend{fsmBackend: newFSMBackend()}, wb: &aclBackend{fsmBackend: newFSMBackend()}}
	for _, b := range []*aclBackend{f.eb, f.wb} {
		b.now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	}
	f.east = New(f.eb, nil, Options{Region: "east", ACLEnabled: true})
	f.fed = &regionsFed{handlers: map[string]http.Handler{"east": f.east}}
	f.west = New(f.wb, nil, Options{Region: "west", AuthoritativeRegion: "east", ACLEnabled: true, Federation: f.fed})
	rec := aclDo(t, f.east, "POST", "/v1/acl/bootstrap", "", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	f.mgmt = decodeToken(t, rec).SecretID
	rec = aclDo(t, f.east, "PUT", "/v1/acl/policy/readonly", f.mgmt, &api.ACLPolicy{Rules: `namespace "default" { policy = "read" }`})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	f.pull(t)
	return f
}

// pull is one ACL replication pull into west: east's policies and global
// tokens, and nothing west has of them that east lacks.
func (f *acls) pull(t *testing.T) {
	t.Helper()
	es, ws := f.eb.Store().Snapshot(), f.wb.Store().Snapshot()
	var goneTokens, gonePolicies []string
	for _, tok := range ws.ACLTokens() {
		if tok.Global && es.ACLTokenByAccessor(tok.AccessorID) == nil {
			goneTokens = append(goneTokens, tok.AccessorID)
		}
	}
	for _, p := range ws.ACLPolicies() {
		if es.ACLPolicyByName(p.Name) == nil {
			gonePolicies = append(gonePolicies, p.Name)
		}
	}
	for _, p := range es.ACLPolicies() {
		f.wb.mustApply(t, &messages.Command{Cmd: &messages.Command_UpsertACLPolicies{UpsertACLPolicies: &messages.UpsertACLPolicies{
			Policies: []*messages.ACLPolicy{{Name: p.Name, Description: p.Description, Rules: p.Rules}}}}})
	}
	for _, tok := range es.ACLTokens() {
		if tok.Global {
			c := proto.Clone(tok).(*messages.ACLToken)
			f.wb.mustApply(t, &messages.Command{Cmd: &messages.Command_UpsertACLTokens{UpsertACLTokens: &messages.UpsertACLTokens{Tokens: []*messages.ACLToken{c}}}})
		}
	}
	if len(goneTokens) > 0 {
		f.wb.mustApply(t, &messages.Command{Cmd: &messages.Command_DeleteACLTokens{DeleteACLTokens: &messages.DeleteACLTokens{AccessorIDs: goneTokens}}})
	}
	if len(gonePolicies) > 0 {
		f.wb.mustApply(t, &messages.Command{Cmd: &messages.Command_DeleteACLPolicies{DeleteACLPolicies: &messages.DeleteACLPolicies{Names: gonePolicies}}})
	}
}

func decodeToken(t *testing.T, rec interface{ Result() *http.Response }) *api.ACLToken {
	t.Helper()
	var tok api.ACLToken
	require.NoError(t, json.NewDecoder(rec.Result().Body).Decode(&tok))
	return &tok
}

// TestACLWritesGoToTheAuthoritativeRegion: on a server of west, policy
// writes, the bootstrap and global token writes are passed on to east,
// committed there and not in west (until west's next pull); local tokens
// and reads stay in west.
func TestACLWritesGoToTheAuthoritativeRegion(t *testing.T) {
	f := newACLRegions(t)
	forwardedOnce := func(t *testing.T, want string) {
		t.Helper()
		require.Equal(t, []string{want}, f.fed.forwarded)
		f.fed.forwarded = nil
	}

	rec := aclDo(t, f.west, "PUT", "/v1/acl/policy/ops?region=west", f.mgmt, &api.ACLPolicy{Rules: `node { policy = "read" }`})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	forwardedOnce(t, "east PUT /v1/acl/policy/ops?region=east from=west")
	require.NotNil(t, f.eb.Store().Snapshot().ACLPolicyByName("ops"), "committed in east")
	require.Nil(t, f.wb.Store().Snapshot().ACLPolicyByName("ops"), "not committed in west")

	rec = aclDo(t, f.west, "POST", "/v1/acl/token", f.mgmt, &api.ACLToken{Name: "g", Type: "client", Policies: []string{"readonly"}, Global: true})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	forwardedOnce(t, "east POST /v1/acl/token?region=east from=west")
	global := decodeToken(t, rec)
	require.NotEmpty(t, global.SecretID, "east's answer, with the secret")
	require.True(t, global.Global)
	require.NotNil(t, f.eb.Store().Snapshot().ACLTokenByAccessor(global.AccessorID))
	require.Nil(t, f.wb.Store().Snapshot().ACLTokenByAccessor(global.AccessorID))

	f.pull(t)
	require.NotNil(t, f.wb.Store().Snapshot().ACLPolicyByName("ops"), "west has it after its pull")
	require.NotNil(t, f.wb.Store().Snapshot().ACLTokenByAccessor(global.AccessorID))

	// An update (no Global in the body: it keeps the token's) and a delete
	// of the global token, known global from west's copy.
	rec = aclDo(t, f.west, "POST", "/v1/acl/token/"+global.AccessorID, f.mgmt, &api.ACLToken{Name: "renamed", Type: "client", Policies: []string{"ops"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	forwardedOnce(t, "east POST /v1/acl/token/"+global.AccessorID+"?region=east from=west")
	require.Equal(t, "renamed", f.eb.Store().Snapshot().ACLTokenByAccessor(global.AccessorID).Name)
	require.Equal(t, "g", f.wb.Store().Snapshot().ACLTokenByAccessor(global.AccessorID).Name)
	rec = aclDo(t, f.west, "DELETE", "/v1/acl/token/"+global.AccessorID, f.mgmt, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	forwardedOnce(t, "east DELETE /v1/acl/token/"+global.AccessorID+"?region=east from=west")
	require.Nil(t, f.eb.Store().Snapshot().ACLTokenByAccessor(global.AccessorID))
	require.NotNil(t, f.wb.Store().Snapshot().ACLTokenByAccessor(global.AccessorID))

	rec = aclDo(t, f.west, "DELETE", "/v1/acl/policy/ops", f.mgmt, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	forwardedOnce(t, "east DELETE /v1/acl/policy/ops?region=east from=west")
	require.Nil(t, f.eb.Store().Snapshot().ACLPolicyByName("ops"))
	require.NotNil(t, f.wb.Store().Snapshot().ACLPolicyByName("ops"))

	rec = aclDo(t, f.west, "POST", "/v1/acl/bootstrap", "", nil)
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "ACL bootstrap already done", "east's answer")
	forwardedOnce(t, "east POST /v1/acl/bootstrap?region=east from=west")

	// A local token, its update and its delete stay in west; so do reads.
	tokensBefore := len(f.eb.Store().Snapshot().ACLTokens())
	rec = aclDo(t, f.west, "POST", "/v1/acl/token", f.mgmt, &api.ACLToken{Name: "l", Type: "client", Policies: []string{"readonly"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	local := decodeToken(t, rec)
	require.False(t, local.Global)
	require.NotNil(t, f.wb.Store().Snapshot().ACLTokenByAccessor(local.AccessorID), "committed in west")
	rec = aclDo(t, f.west, "POST", "/v1/acl/token/"+local.AccessorID, f.mgmt, &api.ACLToken{Name: "l2", Type: "client", Policies: []string{"readonly"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "l2", f.wb.Store().Snapshot().ACLTokenByAccessor(local.AccessorID).Name)
	for _, path := range []string{"/v1/acl/policies", "/v1/acl/policy/readonly", "/v1/acl/tokens", "/v1/acl/token/" + local.AccessorID} {
		rec = aclDo(t, f.west, "GET", path, f.mgmt, nil)
		require.Equal(t, http.StatusOK, rec.Code, "%s: %s", path, rec.Body.String())
	}
	rec = aclDo(t, f.west, "DELETE", "/v1/acl/token/"+local.AccessorID, f.mgmt, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Nil(t, f.wb.Store().Snapshot().ACLTokenByAccessor(local.AccessorID))
	require.Empty(t, f.fed.forwarded, "local tokens and reads are not passed on")
	require.Len(t, f.eb.Store().Snapshot().ACLTokens(), tokensBefore, "east never saw the local token")
}

// TestACLWriteWithTheAuthorityUnreachable: a write that east makes is
// answered with the error naming east and committed nowhere; a local
// token is still made in west.
func TestACLWriteWithTheAuthorityUnreachable(t *testing.T) {
	f := newACLRegions(t)
	delete(f.fed.handlers, "east")
	before := f.wb.Store().Snapshot()
	for _, w := range []struct {
		method, path string
		body         any
	}{
		{"PUT", "/v1/acl/policy/ops", &api.ACLPolicy{Rules: `node { policy = "read" }`}},
		{"DELETE", "/v1/acl/policy/readonly", nil},
		{"POST", "/v1/acl/token", &api.ACLToken{Type: "client", Policies: []string{"readonly"}, Global: true}},
		{"POST", "/v1/acl/bootstrap", nil},
	} {
		rec := aclDo(t, f.west, w.method, w.path, f.mgmt, w.body)
		require.Equal(t, http.StatusInternalServerError, rec.Code, "%s %s: %s", w.method, w.path, rec.Body.String())
		require.Equal(t, `No path to region "east"`, strings.TrimSpace(rec.Body.String()))
	}
	after := f.wb.Store().Snapshot()
	require.Equal(t, before.ACLPolicies(), after.ACLPolicies(), "no policy committed in west")
	require.Equal(t, before.ACLTokens(), after.ACLTokens(), "no token committed in west")

	rec := aclDo(t, f.west, "POST", "/v1/acl/token", f.mgmt, &api.ACLToken{Type: "client", Policies: []string{"readonly"}})
	require.Equal(t, http.StatusOK, rec.Code, "a local token needs no other region: %s", rec.Body.String())
}

// TestACLWritesInTheAuthoritativeRegion: a server whose region is the
// authoritative one (named, or none named) commits them itself.
func TestACLWritesInTheAuthoritativeRegion(t *testing.T) {
	for _, auth := range []string{"", "east"} {
		t.Run("authoritative="+auth, func(t *testing.T) {
			b := &aclBackend{fsmBackend: newFSMBackend()}
			fed := &regionsFed{handlers: map[string]http.Handler{"west": http.NotFoundHandler()}}
			s := New(b, nil, Options{Region: "east", AuthoritativeRegion: auth, ACLEnabled: true, Federation: fed})
			rec := aclDo(t, s, "POST", "/v1/acl/bootstrap", "", nil)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			mgmt := decodeToken(t, rec).SecretID
			rec = aclDo(t, s, "PUT", "/v1/acl/policy/ops", mgmt, &api.ACLPolicy{Rules: `node { policy = "read" }`})
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			rec = aclDo(t, s, "POST", "/v1/acl/token", mgmt, &api.ACLToken{Type: "client", Policies: []string{"ops"}, Global: true})
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			require.NotNil(t, b.Store().Snapshot().ACLPolicyByName("ops"))
			require.NotNil(t, b.Store().Snapshot().ACLTokenByAccessor(decodeToken(t, rec).AccessorID))
			require.Empty(t, fed.forwarded)
		})
	}
}

// TestACLWriteLoopRefused: a write passed on by another region to one that
// is not authoritative either (the regions disagree) is refused, not sent
// on; with ACLs off nothing is passed on.
func TestACLWriteLoopRefused(t *testing.T) {
	f := newACLRegions(t)
	r := aclRequest(t, "PUT", "/v1/acl/policy/ops", f.mgmt, &api.ACLPolicy{Rules: `node { policy = "read" }`})
	r.Header.Set(ACLAuthorityHeader, "north")
	rec := httptest.NewRecorder()
	f.west.ServeHTTP(rec, r)
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.Contains(t, rec.Body.String(), `passed on by region "north"`)
	require.Contains(t, rec.Body.String(), "authoritative_region")
	require.Empty(t, f.fed.forwarded)
	require.Nil(t, f.wb.Store().Snapshot().ACLPolicyByName("ops"))

	off := New(newFSMBackend(), nil, Options{Region: "west", AuthoritativeRegion: "east", Federation: f.fed})
	rec = aclDo(t, off, "PUT", "/v1/acl/policy/ops", "", &api.ACLPolicy{Rules: `node { policy = "read" }`})
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	require.Empty(t, f.fed.forwarded)
}
