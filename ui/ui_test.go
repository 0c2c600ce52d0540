package ui

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHandlerServesIndexAssetsAndRedirects(t *testing.T) {
	mux := http.NewServeMux()
	Routes(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := noFollow.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(body)
	}
	// Every page URL, in Nomad's shapes, answers the one index.html.
	for _, p := range []string{"/ui/", "/ui/jobs", "/ui/jobs/web@default", "/ui/allocations/8f2c", "/ui/clients",
		"/ui/clients/n1", "/ui/csi/volumes", "/ui/csi/plugins", "/ui/servers", "/ui/actors", "/ui/no/such/page"} {
		resp, body := get(p)
		require.Equal(t, http.StatusOK, resp.StatusCode, p)
		require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"), p)
		require.Contains(t, body, `<script type="module" src="/ui/assets/app.js">`, p)
	}
	resp, body := get("/ui/assets/app.js")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript"), resp.Header.Get("Content-Type"))
	require.Contains(t, body, "import")
	resp, _ = get("/ui/assets/style.css")
	require.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css"))

	resp, body = get("/ui/assets/nope.js")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Contains(t, body, "no such asset: assets/nope.js")

	for _, p := range []string{"/", "/ui"} {
		resp, _ = get(p)
		require.Equal(t, http.StatusTemporaryRedirect, resp.StatusCode, p)
		require.Equal(t, "/ui/", resp.Header.Get("Location"), p)
	}
}

// TestIndexPreloadsEveryModule: index.html preloads each embedded module,
// so that a page's modules load at once rather than one import level at a
// time (a new module must be listed there).
func TestIndexPreloadsEveryModule(t *testing.T) {
	index, err := fs.ReadFile(assets, "index.html")
	require.NoError(t, err)
	mods, err := fs.Glob(assets, "assets/*.js")
	require.NoError(t, err)
	pages, err := fs.Glob(assets, "assets/pages/*.js")
	require.NoError(t, err)
	for _, m := range append(mods, pages...) {
		require.Contains(t, string(index), `<link rel="modulepreload" href="/ui/`+m+`">`, m)
	}
}
