package ui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/ui"
	"github.com/troupe-dev/troupe/ui/uitest"
)

// changingJobs serves /v1/jobs as a list that gains job "b" at index 2
// when added is closed; a blocking read waits for it. The event stream
// is refused when refuse is set, else it sends the Job event of "b" when
// it comes (and the reads of each kind are counted).
type changingJobs struct {
	refuse bool
	added  chan struct{}
	mu     sync.Mutex
	reads  map[string]int // "plain", "blocking", "stream"
}

func (c *changingJobs) count(kind string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads[kind]++
}

func (c *changingJobs) counted(kind string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads[kind]
}

func (c *changingJobs) handler() http.Handler {
	mux := http.NewServeMux()
	ui.Routes(mux)
	job := func(id string) map[string]any {
		return map[string]any{"ID": id, "Name": id, "Namespace": "default", "Type": "service", "Status": "running"}
	}
	mux.HandleFunc("GET /v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		list, index := []any{job("a")}, "1"
		if r.URL.Query().Get("index") != "" {
			c.count("blocking")
			select {
			case <-c.added:
			case <-r.Context().Done():
				return
			}
		} else {
			c.count("plain")
		}
		select {
		case <-c.added:
			list, index = append(list, job("b")), "2"
		default:
		}
		w.Header().Set("X-Nomad-Index", index)
		_ = json.NewEncoder(w).Encode(list)
	})
	mux.HandleFunc("GET /v1/event/stream", func(w http.ResponseWriter, r *http.Request) {
		c.count("stream")
		if c.refuse {
			http.Error(w, "Permission denied", http.StatusForbidden)
			return
		}
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-c.added:
			fmt.Fprintln(w, `{"Index":2,"Events":[{"Topic":"Job","Type":"JobRegistered","Key":"b","Namespace":"default","Index":2,"Payload":{}}]}`)
			w.(http.Flusher).Flush()
		case <-r.Context().Done():
			return
		}
		<-r.Context().Done()
	})
	return mux
}

// TestJobsPageFollowsStreamOrFallsBack: the jobs page shows a job added
// after it loaded. With the event stream it reads /v1/jobs again after
// the job's event and never blocks on it; with the stream refused (a
// token that may not read the topic) it follows blocking queries from
// the index it drew, without reading the list again first.
func TestJobsPageFollowsStreamOrFallsBack(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		api := &changingJobs{refuse: refuse, added: make(chan struct{}), reads: map[string]int{}}
		srv := httptest.NewServer(api.handler())
		t.Cleanup(srv.Close) // after the browser's cleanup, which ends its reads
		b := uitest.Start(t)
		b.Open(t, srv.URL+"/ui/jobs")
		b.WaitReady(t, 20*time.Second)
		b.WaitFor(t, `document.querySelector('a[href="/ui/jobs/a@default"]')`, 5*time.Second)
		require.Eventually(t, func() bool { return api.counted("stream") == 1 }, 5*time.Second, 10*time.Millisecond)
		if refuse {
			require.Eventually(t, func() bool { return api.counted("blocking") == 1 }, 5*time.Second, 10*time.Millisecond)
		}
		close(api.added)
		b.WaitFor(t, `document.querySelector('a[href="/ui/jobs/b@default"]')`, 5*time.Second)
		if refuse {
			require.Equal(t, 1, api.counted("plain"), "the fallback blocks from the index drawn")
		} else {
			require.Equal(t, 0, api.counted("blocking"))
			require.Equal(t, 2, api.counted("plain"), "read, then read again after the event")
		}
		require.Equal(t, 1, api.counted("stream"), "one stream for the page")
	}
}
