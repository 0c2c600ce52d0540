package agent

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
)

// TestClientOnlyAgentServesWhatItKnows: a client-only agent answers
// requests about itself and its own allocations and passes the others
// to a server (none known here: 503), which passes them on to the right
// client.
func TestClientOnlyAgentServesWhatItKnows(t *testing.T) {
	db, err := clientstate.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	require.NoError(t, err)
	defer db.Close()
	db.PutAlloc(&messages.Allocation{ID: "a-here", NodeID: "n1"})
	db.Flush()
	a := &Agent{node: &messages.Node{ID: "n1"}, db: db}
	h := a.clientOnlyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusTeapot) // served here
	}))
	for target, here := range map[string]bool{
		"/v1/agent/self":                    true,
		"/v1/actors":                        true,
		"/v1/actors?node=n2":                false,
		"/v1/client/stats":                  true,
		"/v1/client/stats?node_id=n1":       true,
		"/v1/client/stats?node_id=n2":       false,
		"/v1/client/fs/logs/a-here?task=t":  true,
		"/v1/client/fs/logs/a-there?task=t": false,
		"/v1/jobs":                          false,
		"/v1/node/n1/allocations":           false,
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if here {
			require.Equal(t, http.StatusTeapot, rec.Code, target)
		} else {
			require.Equal(t, http.StatusServiceUnavailable, rec.Code, "%s goes to a server", target)
		}
	}
}
