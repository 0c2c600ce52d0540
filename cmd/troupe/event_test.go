package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEventStreamCommand: `troupe event stream` asks for its topics and
// index, prints each frame but heartbeats, and fails on an error frame.
func TestEventStreamCommand(t *testing.T) {
	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/v1/event/stream", r.URL.Path)
		query = r.URL.RawQuery
		fmt.Fprint(w, "{}\n{\"Index\":7,\"Events\":[{\"Topic\":\"Job\"}]}\n{\"Error\":\"state: events lost\"}\n")
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run([]string{"event", "stream", "-address", srv.URL, "-topic", "Job", "-topic", "Allocation:a1", "-index", "5"}, &stdout, &stderr)
	require.Equal(t, 1, code)
	require.Equal(t, "index=5&topic=Job&topic=Allocation%3Aa1", query)
	require.Equal(t, "{\"Index\":7,\"Events\":[{\"Topic\":\"Job\"}]}\n", stdout.String())
	require.Contains(t, stderr.String(), "state: events lost")
}

// TestMonitorCommand: `troupe monitor` asks for plain lines at its level
// and prints them.
func TestMonitorCommand(t *testing.T) {
	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/v1/agent/monitor", r.URL.Path)
		query = r.URL.RawQuery
		fmt.Fprint(w, "level=DEBUG msg=hello\n")
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"monitor", "-address", srv.URL, "-log-level", "debug"}, &stdout, &stderr), stderr.String())
	require.Equal(t, "log_json=false&log_level=debug&plain=true", query)
	require.Equal(t, "level=DEBUG msg=hello\n", stdout.String())
}
