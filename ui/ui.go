package ui

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var static embed.FS

// assets is the embedded static/ folder.
var assets = func() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the folder is embedded above: it is always there
	}
	return sub
}()

// Prefix is the path the UI is served under.
const Prefix = "/ui/"

// Routes registers the UI on mux: GET /ui/... (Handler), and GET / and
// GET /ui redirect to /ui/.
func Routes(mux *http.ServeMux) {
	mux.Handle("GET "+Prefix, Handler())
	redirect := http.RedirectHandler(Prefix, http.StatusTemporaryRedirect)
	mux.Handle("GET /{$}", redirect)
	mux.Handle("GET /ui", redirect)
}

// Handler serves the UI under Prefix: a path naming an embedded asset
// (/ui/assets/...) gets the file, a missing asset a 404, and every other
// path index.html, for the client-side router to draw. index.html loads
// the bundled script and the style sheet from /ui/v/<version>/, which a
// browser keeps (Cache-Control immutable) until the binary's UI changes;
// index.html itself is revalidated by its ETag.
func Handler() http.Handler {
	files := http.FileServerFS(assets)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rel := strings.TrimPrefix(path.Clean(r.URL.Path), strings.TrimSuffix(Prefix, "/"))
		rel = strings.TrimPrefix(rel, "/")
		if v, rest, ok := strings.Cut(strings.TrimPrefix(rel, "v/"), "/"); ok && strings.HasPrefix(rel, "v/") {
			if v == built.version {
				w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
			} else {
				w.Header().Set("Cache-Control", "no-cache") // a page of another version
			}
			if rest == "bundle.js" {
				w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
				_, _ = w.Write(built.bundle)
				return
			}
			rel = rest
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		if strings.HasPrefix(rel, "assets/") {
			if _, err := fs.Stat(assets, rel); err != nil {
				http.Error(w, "ui: no such asset: "+rel, http.StatusNotFound)
				return
			}
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/" + rel
			files.ServeHTTP(w, r2)
			return
		}
		serveIndex(w, r)
	})
}

func serveIndex(w http.ResponseWriter, r *http.Request) {
	if built.err != nil {
		http.Error(w, built.err.Error(), http.StatusInternalServerError)
		return
	}
	etag := `"` + built.version + `"`
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(built.index)
}
