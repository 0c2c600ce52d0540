package main

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
)

// TestTokenFlagAndEnv: the ACL token a command sends as X-Nomad-Token is
// -token, else $TROUPE_TOKEN, else $NOMAD_TOKEN (the first one set wins);
// with none set no token header goes out (the anonymous policy applies).
// Both the API client's requests and the keyring's own call send it, and
// neither sends an Authorization header.
func TestTokenFlagAndEnv(t *testing.T) {
	type sent struct{ token, auth string }
	var mu sync.Mutex
	got := map[string][]sent{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Path] = append(got[r.URL.Path], sent{r.Header.Get(api.TokenHeader), r.Header.Get("Authorization")})
		mu.Unlock()
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	f := &fakeAPI{t: t, srv: srv}
	env := map[string]string{}
	getenv = func(k string) string { return env[k] }
	t.Cleanup(func() { getenv = func(string) string { return "" } })

	for _, tc := range []struct {
		name          string
		flag          string
		troupe, nomad string
		want          string
	}{
		{"none", "", "", "", ""},
		{"NOMAD_TOKEN", "", "", "nomad-secret", "nomad-secret"},
		{"TROUPE_TOKEN", "", "troupe-secret", "", "troupe-secret"},
		{"TROUPE_TOKEN over NOMAD_TOKEN", "", "troupe-secret", "nomad-secret", "troupe-secret"},
		{"-token", "flag-secret", "", "", "flag-secret"},
		{"-token over both", "flag-secret", "troupe-secret", "nomad-secret", "flag-secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clear(env)
			env[tokenEnv], env[nomadTokenEnv] = tc.troupe, tc.nomad
			mu.Lock()
			clear(got)
			mu.Unlock()
			members := []string{"server", "members"}
			keyring := []string{"operator", "gossip", "keyring", "-list"}
			if tc.flag != "" {
				members = append(members, "-token", tc.flag)
				keyring = append(keyring, "-token", tc.flag)
			}
			_, _, _ = f.runCLI(members...)
			_, _, _ = f.runCLI(keyring...)
			mu.Lock()
			defer mu.Unlock()
			want := []sent{{token: tc.want}}
			require.Equal(t, want, got["/v1/agent/members"], "server members")
			require.Equal(t, want, got["/v1/agent/keyring/list"], "operator gossip keyring -list")
		})
	}
}
