package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSystemGC: `troupe system gc` sends one PUT /v1/system/gc and fails
// with the server's refusal.
func TestSystemGC(t *testing.T) {
	var calls []string
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls = append(calls, r.Method+" "+r.URL.Path)
		w.WriteHeader(status)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"system", "gc", "-address", srv.URL}, &stdout, &stderr), stderr.String())
	require.Equal(t, []string{"PUT /v1/system/gc"}, calls)

	status = http.StatusInternalServerError
	stderr.Reset()
	require.NotEqual(t, 0, run([]string{"system", "gc", "-address", srv.URL}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "running the garbage collector")
	require.Equal(t, 1, run([]string{"system", "gc", "extra", "-address", srv.URL}, &stdout, &stderr), "no arguments")
}
