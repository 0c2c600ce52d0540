package ui

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

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
		require.Contains(t, body, `<script type="module" src="/ui/v/`+built.version+`/bundle.js">`, p)
		require.NotContains(t, body, "modulepreload", p)
		require.Equal(t, `"`+built.version+`"`, resp.Header.Get("ETag"), p)
	}
	// index.html is revalidated; the bundle and style sheet are kept.
	req, _ := http.NewRequest("GET", srv.URL+"/ui/jobs", nil)
	req.Header.Set("If-None-Match", `"`+built.version+`"`)
	resp304, err := noFollow.Do(req)
	require.NoError(t, err)
	resp304.Body.Close()
	require.Equal(t, http.StatusNotModified, resp304.StatusCode)
	for _, p := range []string{"/ui/v/" + built.version + "/bundle.js", "/ui/v/" + built.version + "/assets/style.css"} {
		resp, body := get(p)
		require.Equal(t, http.StatusOK, resp.StatusCode, p)
		require.Equal(t, "public, max-age=31536000, immutable", resp.Header.Get("Cache-Control"), p)
		require.NotEmpty(t, body, p)
	}
	resp, _ := get("/ui/v/0000/bundle.js")
	require.Equal(t, "no-cache", resp.Header.Get("Cache-Control"), "another version's page is not kept")
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

// TestBundleBuilds: the modules join into one script: every module in it
// once, dependencies first, with no import or export left.
func TestBundleBuilds(t *testing.T) {
	require.NoError(t, built.err)
	src := string(built.bundle)
	for _, line := range strings.Split(src, "\n") {
		require.False(t, strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "export "), line)
	}
	mods, err := fs.Glob(assets, "assets/*.js")
	require.NoError(t, err)
	pages, err := fs.Glob(assets, "assets/pages/*.js")
	require.NoError(t, err)
	pos := map[string]int{}
	for _, m := range append(mods, pages...) {
		require.Equal(t, 1, strings.Count(src, "\n// "+m+"\n"), m)
		pos[m] = strings.Index(src, "\n// "+m+"\n")
	}
	require.Less(t, pos["assets/api.js"], pos["assets/pages/common.js"])
	require.Less(t, pos["assets/router.js"], pos["assets/app.js"])
	require.Contains(t, src, "const { html, badge, section, ListView } = __m")

	_, err = bundle(fstest.MapFS{"a.js": {Data: []byte("export default 1;\n")}}, "a.js")
	require.ErrorContains(t, err, `a.js:1: cannot bundle "export default 1;"`)
	_, err = bundle(fstest.MapFS{"a.js": {Data: []byte("import { b } from './b.js';\n")},
		"b.js": {Data: []byte("import { a } from './a.js';\n")}}, "a.js")
	require.ErrorContains(t, err, "import cycle through a.js")
}
