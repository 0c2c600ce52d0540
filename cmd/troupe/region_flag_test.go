package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRegionFlag: -region, else $TROUPE_REGION, else $NOMAD_REGION, is
// sent as ?region= (the agent forwards the request there); none sends none.
func TestRegionFlag(t *testing.T) {
	f := newFakeAPI(t)
	env := map[string]string{}
	getenv = func(k string) string { return env[k] }
	t.Cleanup(func() { getenv = func(string) string { return "" } })
	_, _, _ = f.runCLI("server", "members")
	_, _, _ = f.runCLI("server", "members", "-region", "eu")
	env[nomadRegionEnv] = "from-nomad"
	_, _, _ = f.runCLI("server", "members")
	env[regionEnv] = "from-troupe"
	_, _, _ = f.runCLI("server", "members")
	require.Equal(t, []string{"-", "eu", "from-nomad", "from-troupe"}, paramSent(f, http.MethodGet, "/v1/agent/members", "region"))
}

// TestServerJoin: `troupe server join ADDR...` asks the agent to join the
// WAN pool through each address and prints how many answered.
func TestServerJoin(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "PUT /v1/agent/join", r.Method+" "+r.URL.Path)
		got = r.URL.Query()["address"]
		_, _ = w.Write([]byte(`{"num_joined": 2, "error": ""}`))
	}))
	defer srv.Close()
	f := &fakeAPI{t: t, srv: srv}
	code, out, errOut := f.runCLI("server", "join", "10.1.0.1", "10.1.0.2:4650")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Joined 2 servers successfully\n", out)
	require.Equal(t, []string{"10.1.0.1", "10.1.0.2:4650"}, got)
	code, _, errOut = f.runCLI("server", "join")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "ADDR")
}
