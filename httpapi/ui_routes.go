package httpapi

import (
	"net/http"

	"github.com/troupe-dev/troupe/ui"
)

// uiRoutes serves the web UI (package ui) under /ui/, and redirects / and
// /ui there. The patterns are spelled out here, as every other route's
// are, so that the ACL route table (acl_need.go) sees them.
func (s *Server) uiRoutes(m *http.ServeMux) {
	m.Handle("GET /ui/", ui.Handler())
	redirect := http.RedirectHandler(ui.Prefix, http.StatusTemporaryRedirect)
	m.Handle("GET /{$}", redirect)
	m.Handle("GET /ui", redirect)
}
