package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
)

// getThrough is GET path?query on agent a's HTTP API, its status and
// body.
func getThrough(t *testing.T, a *agentProc, path string, query url.Values) (int, []byte) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 2 * requestTimeout}).Get(a.HTTPAddr() + path + "?" + query.Encode())
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, body
}

// checkFSAndActorsThroughEast reads, through east's server for west
// (?region=west), the allocation dir of allocID (a task of west's client
// that writes "tick N" lines to its stdout): fs/ls, fs/stat, fs/cat and
// fs/readat; and the actor tree of west's server and of the allocation's
// node, the same as west's own server answers.
func checkFSAndActorsThroughEast(t *testing.T, east, west *agentProc, allocID, nodeID, task string) {
	t.Helper()
	q := func(kv ...string) url.Values {
		v := url.Values{"region": {"west"}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	stdout := "alloc/logs/" + task + ".stdout.0"

	code, body := getThrough(t, east, "/v1/client/fs/ls/"+allocID, q("path", "alloc/logs"))
	require.Equal(t, http.StatusOK, code, string(body))
	var entries []fsEntry
	require.NoError(t, json.Unmarshal(body, &entries), string(body))
	names := map[string]bool{}
	for _, e := range entries {
		names[e.Name] = true
	}
	require.True(t, names[task+".stdout.0"], "fs/ls through east: %s", body)

	code, body = getThrough(t, east, "/v1/client/fs/stat/"+allocID, q("path", stdout))
	require.Equal(t, http.StatusOK, code, string(body))
	var st fsEntry
	require.NoError(t, json.Unmarshal(body, &st), string(body))
	require.Equal(t, task+".stdout.0", st.Name)
	require.False(t, st.IsDir)
	require.Positive(t, st.Size, "fs/stat through east")

	code, body = getThrough(t, east, "/v1/client/fs/cat/"+allocID, q("path", stdout))
	require.Equal(t, http.StatusOK, code, string(body))
	require.True(t, strings.HasPrefix(string(body), "tick 0\n"), "fs/cat through east: %.80q", body)

	code, body = getThrough(t, east, "/v1/client/fs/readat/"+allocID, q("path", stdout, "offset", "5", "limit", "2"))
	require.Equal(t, http.StatusOK, code, string(body))
	require.Equal(t, "0\n", string(body), "fs/readat through east: bytes 5..6 of %q", "tick 0\n")

	code, body = getThrough(t, east, "/v1/client/fs/cat/"+allocID, q("path", "../../etc/passwd"))
	require.NotEqual(t, http.StatusOK, code, "a path out of the allocation dir, through east: %s", body)

	tree := func(a *agentProc, query url.Values) *api.ActorTree {
		t.Helper()
		code, body := getThrough(t, a, "/v1/actors", query)
		require.Equal(t, http.StatusOK, code, string(body))
		var tr api.ActorTree
		require.NoError(t, json.Unmarshal(body, &tr), string(body))
		return &tr
	}
	// A server's tree holds a node actor per client of its region: west's
	// holds west's client's, east's does not.
	hasNode := func(tr *api.ActorTree) bool {
		for _, a := range tr.Actors {
			if strings.HasSuffix(a.Path, "nodes/"+nodeID) {
				return true
			}
		}
		return false
	}
	own, direct, through := tree(east, url.Values{}), tree(west, url.Values{}), tree(east, q())
	require.True(t, hasNode(direct), "west's server has a node actor for its client")
	require.False(t, hasNode(own), "east's server has none for west's client")
	require.True(t, hasNode(through), "the actor tree through east is west's server's")

	client := tree(east, q("node", nodeID))
	require.Equal(t, nodeID, client.Node)
	found := false
	for _, a := range client.Actors {
		found = found || strings.Contains(a.Path, allocID)
	}
	require.True(t, found, "the allocation's actor in its node's tree through east")
}

// fsEntry is the part of fs/ls's and fs/stat's answer checked.
type fsEntry struct {
	Name  string
	IsDir bool
	Size  int64
}
