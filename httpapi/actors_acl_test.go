package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
)

// aclActorsBackend answers a fixed actor tree over an ACL store.
type aclActorsBackend struct {
	*aclBackend
	tree func() *api.ActorTree
}

func (b *aclActorsBackend) ActorTree(context.Context, string) (*api.ActorTree, error) {
	return b.tree(), nil
}

func actorTreeFixture() *api.ActorTree {
	web, db, gone := "client/allocs/default-web-a0", "client/allocs/prod-db-a0", "client/allocs/gone"
	return &api.ActorTree{Node: "n1", Actors: []*api.ActorInfo{
		{Path: "client", Kind: "client", Children: []string{web, db, gone}},
		{Path: web, Kind: "alloc", Parent: "client", Children: []string{web + "/tasks/t"}},
		{Path: web + "/tasks/t", Kind: "task", Parent: web},
		{Path: db, Kind: "alloc", Parent: "client", Children: []string{db + "/tasks/t"}},
		{Path: db + "/tasks/t", Kind: "task", Parent: db},
		{Path: gone, Kind: "alloc", Parent: "client"},
		{Path: "server", Kind: "server", Children: []string{"server/nodes/n1"}},
		{Path: "server/nodes/n1", Kind: "node", Parent: "server"},
	}}
}

// TestActorTreeFilteredByToken: the tree needs agent:read; beneath it an
// allocation's actors show only to a token that may read jobs in the
// allocation's namespace (an unknown allocation's to none), a node's only
// with node:read, and each parent lists only the children shown; a
// management token sees every actor.
func TestActorTreeFilteredByToken(t *testing.T) {
	_, ab, _ := aclServer(t, "")
	b := &aclActorsBackend{aclBackend: ab, tree: actorTreeFixture}
	s := New(b, nil, Options{ACLEnabled: true})
	mgmt := bootstrapOn(t, s, ab)
	withServices(t, ab.fsmBackend, "default", "web", 1)
	withServices(t, ab.fsmBackend, "prod", "db", 1)
	paths := func(token string) (int, []string, map[string][]string) {
		t.Helper()
		rec := aclDo(t, s, "GET", "/v1/actors", token, nil)
		if rec.Code != http.StatusOK {
			return rec.Code, nil, nil
		}
		var tree api.ActorTree
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &tree))
		var out []string
		children := map[string][]string{}
		for _, a := range tree.Actors {
			out = append(out, a.Path)
			children[a.Path] = a.Children
		}
		return rec.Code, out, children
	}
	code, all, _ := paths(mgmt)
	require.Equal(t, http.StatusOK, code)
	require.Len(t, all, len(actorTreeFixture().Actors), "management sees every actor")

	prod := clientToken(t, s, mgmt, "prod", `agent { policy = "read" }
namespace "prod" { policy = "read" }`)
	code, seen, children := paths(prod)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []string{"client", "client/allocs/prod-db-a0", "client/allocs/prod-db-a0/tasks/t", "server"}, seen)
	require.Equal(t, []string{"client/allocs/prod-db-a0"}, children["client"], "the parent lists only what is shown")
	require.Empty(t, children["server"])

	ops := clientToken(t, s, mgmt, "ops", `agent { policy = "read" }
node { policy = "read" }`)
	_, seen, _ = paths(ops)
	require.Equal(t, []string{"client", "server", "server/nodes/n1"}, seen)

	jobsOnly := clientToken(t, s, mgmt, "jobs", `namespace "*" { policy = "read" }`)
	code, _, _ = paths(jobsOnly)
	require.Equal(t, http.StatusForbidden, code, "the tree needs agent:read")
	code, _, _ = paths("")
	require.Equal(t, http.StatusForbidden, code)
	require.True(t, slices.Contains(all, "client/allocs/gone"))
}

// TestActorTreeBlockingQueryEndsWithToken: a blocking read of the tree
// ends when its token is deleted, with 403.
func TestActorTreeBlockingQueryEndsWithToken(t *testing.T) {
	_, ab, _ := aclServer(t, "")
	b := &aclActorsBackend{aclBackend: ab, tree: actorTreeFixture}
	s := New(b, nil, Options{ACLEnabled: true})
	mgmt := bootstrapOn(t, s, ab)
	tok := clientToken(t, s, mgmt, "agent", `agent { policy = "read" }`)
	idx := strconv.FormatUint(ab.Store().Snapshot().Index(), 10)
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		r := httptest.NewRequest("GET", "/v1/actors?index="+idx+"&wait=5m", nil)
		r.Header.Set("X-Nomad-Token", tok)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		done <- rec
	}()
	accessor := ab.Store().Snapshot().ACLTokenBySecret(tok).AccessorID
	require.Equal(t, http.StatusOK, aclDo(t, s, "DELETE", "/v1/acl/token/"+accessor, mgmt, nil).Code)
	select {
	case rec := <-done:
		require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking read of the tree outlived its token")
	}
}
