package httpapi

import (
	"bufio"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCompressGzipsAnswersButNotStreams: an answer of 1 KiB or more goes
// gzipped to a client that accepts gzip (and plain to one that does not);
// a small one goes plain; the event stream is never gzipped, and its
// headers and each line reach the reader as they are written.
func TestCompressGzipsAnswersButNotStreams(t *testing.T) {
	big := "[" + strings.Repeat(`{"ID":"a","ClientStatus":"running"},`, 200) + `{}]`
	line := make(chan string)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/allocations", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, big)
	})
	mux.HandleFunc("GET /v1/status/leader", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `"127.0.0.1:4647"`)
	})
	mux.HandleFunc("GET /v1/event/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case l := <-line:
				_, _ = io.WriteString(w, l+"\n")
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	})
	srv := httptest.NewServer(Compress(mux))
	t.Cleanup(srv.Close)
	client := &http.Client{Timeout: 10 * time.Second} // a stream held back fails, not hangs
	get := func(path string, gz bool) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip") // set by hand: the transport leaves the body as it came
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}

	resp := get("/v1/allocations", true)
	require.Equal(t, "gzip", resp.Header.Get("Content-Encoding"))
	zr, err := gzip.NewReader(resp.Body)
	require.NoError(t, err)
	body, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.Equal(t, big, string(body))

	resp = get("/v1/allocations", false)
	require.Empty(t, resp.Header.Get("Content-Encoding"))
	body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, big, string(body))

	resp = get("/v1/status/leader", true)
	require.Empty(t, resp.Header.Get("Content-Encoding"), "under 1 KiB: plain")

	resp = get("/v1/event/stream", true) // returns with the headers, before any line
	require.Empty(t, resp.Header.Get("Content-Encoding"))
	lines := bufio.NewReader(resp.Body)
	for _, want := range []string{`{}`, `{"Index":5}`} {
		select {
		case line <- want:
		case <-time.After(10 * time.Second):
			t.Fatal("the stream's handler is not writing")
		}
		got, err := lines.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, want+"\n", got, "each line arrives as it is written")
	}
}
