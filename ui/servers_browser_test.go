package ui_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/ui"
	"github.com/troupe-dev/troupe/ui/uitest"
)

// servers is a fake agent's view of its servers: the members and raft
// peers it answers, at a store index; a blocking read of the raft
// configuration (?index= at or past the index) waits until join or ?wait=.
type servers struct {
	mu      sync.Mutex
	index   int
	names   []string
	changed chan struct{}
}

func (s *servers) join(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names = append(s.names, name)
	s.index++
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *servers) routes(mux *http.ServeMux) {
	answer := func(w http.ResponseWriter, body any) {
		w.Header().Set("X-Nomad-Index", strconv.Itoa(s.index))
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}
	mux.HandleFunc("GET /v1/operator/raft/configuration", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		changed, blocking := s.changed, r.URL.Query().Get("index") != ""
		s.mu.Unlock()
		if blocking {
			wait, err := time.ParseDuration(r.URL.Query().Get("wait"))
			if err != nil {
				http.Error(w, "fake: bad wait", http.StatusBadRequest)
				return
			}
			select {
			case <-changed:
			case <-time.After(wait):
			case <-r.Context().Done():
				return
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		var peers []map[string]any
		for i, n := range s.names {
			peers = append(peers, map[string]any{"ID": n + "-id", "Node": n, "Address": n + ":4647", "Leader": i == 0, "Voter": true})
		}
		answer(w, map[string]any{"Index": s.index, "Servers": peers})
	})
	mux.HandleFunc("GET /v1/agent/members", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		var ms []map[string]any
		for _, n := range s.names {
			ms = append(ms, map[string]any{"Name": n + ".global", "Addr": "10.0.0.1", "Port": 4648, "Status": "alive",
				"Tags": map[string]string{"region": "global", "dc": "dc1"}})
		}
		answer(w, map[string]any{"Members": ms})
	})
	mux.HandleFunc("GET /v1/status/leader", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		answer(w, s.names[0]+":4647")
	})
}

// TestServersPageFollowsChanges: the servers page shows a server that
// joins after it opened, without a click or a reload: it follows the
// raft configuration with blocking reads (?index=, with a bounded
// ?wait=, as members and peers change without the store).
func TestServersPageFollowsChanges(t *testing.T) {
	s := &servers{index: 5, names: []string{"s1"}, changed: make(chan struct{})}
	mux := http.NewServeMux()
	ui.Routes(mux)
	s.routes(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := uitest.Start(t)
	b.Open(t, srv.URL+"/ui/servers")
	b.WaitReady(t, 20*time.Second)
	rows := `document.querySelectorAll('[data-section=servers] [data-peers] tbody tr').length`
	require.Equal(t, 1, uitest.Eval[int](t, b, rows))
	require.Equal(t, "s1:4647", uitest.Eval[string](t, b, `document.querySelector('[data-leader]').textContent`))
	require.Zero(t, uitest.Eval[int](t, b, `document.querySelectorAll('#main button').length`), "no Refresh button")
	b.WaitFor(t, `performance.getEntriesByType('resource').some((e) => e.name.includes('/v1/operator/raft/configuration?') && e.name.includes('index=5'))`, 10*time.Second)

	s.join("s2")
	b.WaitFor(t, `document.querySelectorAll('[data-section=servers] [data-peers] tbody tr').length === 2`, 5*time.Second)
	b.WaitFor(t, `document.querySelector('[data-section=servers] [data-members]').innerText.includes('s2.global')`, 5*time.Second)
	b.Screenshot(t, "servers-joined")
}
