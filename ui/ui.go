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
// path index.html, for the client-side router to draw.
func Handler() http.Handler {
	files := http.FileServerFS(assets)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rel := strings.TrimPrefix(path.Clean(r.URL.Path), strings.TrimSuffix(Prefix, "/"))
		rel = strings.TrimPrefix(rel, "/")
		if strings.HasPrefix(rel, "assets/") {
			if _, err := fs.Stat(assets, rel); err != nil {
				http.Error(w, "ui: no such asset: "+rel, http.StatusNotFound)
				return
			}
			w.Header().Set("Cache-Control", "no-cache")
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/" + rel
			files.ServeHTTP(w, r2)
			return
		}
		serveIndex(w)
	})
}

func serveIndex(w http.ResponseWriter) {
	body, err := fs.ReadFile(assets, "index.html")
	if err != nil {
		http.Error(w, "ui: index.html is not embedded", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(body)
}
