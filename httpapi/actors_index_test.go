package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
)

// actorsBackend answers the actor tree from a fixed list.
type actorsBackend struct {
	*fsmBackend
	tree *api.ActorTree
}

func (b *actorsBackend) ActorTree(context.Context, string) (*api.ActorTree, error) {
	return b.tree, nil
}

// TestActorsBlockingQuery: GET /v1/actors answers with the store's index
// in X-Nomad-Index; with ?index= at that index it waits until the state
// changes (then answers the new index), or until ?wait= passes.
func TestActorsBlockingQuery(t *testing.T) {
	b := &actorsBackend{fsmBackend: newFSMBackend(), tree: &api.ActorTree{Node: "n1",
		Actors: []*api.ActorInfo{{Path: "client", Kind: "client", Phase: "running"}}}}
	b.mustApply(t, poolNode("n1", "default"))
	srv := httptest.NewServer(New(b, nil, Options{}))
	defer srv.Close()
	get := func(query string) (uint64, *api.ActorTree) {
		t.Helper()
		resp, err := http.Get(srv.URL + "/v1/actors" + query)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var tree api.ActorTree
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&tree))
		index, err := strconv.ParseUint(resp.Header.Get("X-Nomad-Index"), 10, 64)
		require.NoError(t, err)
		return index, &tree
	}
	index, tree := get("")
	require.Equal(t, b.Store().Snapshot().Index(), index)
	require.Equal(t, "client", tree.Actors[0].Path)

	// Nothing changes: the query holds until its wait passes.
	start := time.Now()
	again, _ := get("?index=" + strconv.FormatUint(index, 10) + "&wait=100ms")
	require.Equal(t, index, again)
	require.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)

	// A change ends it with the new index.
	type answer struct {
		index uint64
		tree  *api.ActorTree
	}
	done := make(chan answer, 1)
	go func() {
		i, tr := get("?index=" + strconv.FormatUint(index, 10) + "&wait=30s")
		done <- answer{i, tr}
	}()
	select {
	case <-done:
		t.Fatal("the blocking query answered before anything changed")
	case <-time.After(50 * time.Millisecond):
	}
	b.mustApply(t, poolNode("n2", "default"))
	select {
	case got := <-done:
		require.Greater(t, got.index, index)
		require.Equal(t, "n1", got.tree.Node)
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking query did not answer the change")
	}
}
