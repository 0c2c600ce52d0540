// Package ui is troupe's web UI: static HTML, ES modules and CSS embedded
// in the binary and served by the agent under /ui/ (Routes), with no
// build step. The pages follow Nomad's URL shapes (/ui/jobs,
// /ui/jobs/<id>@<namespace>, /ui/allocations/<id>, /ui/clients,
// /ui/clients/<id>, /ui/csi/volumes, /ui/csi/plugins, /ui/servers) plus
// /ui/actors, the live actor tree; a client-side router draws them, so the
// handler answers index.html for every /ui/ path that is not an asset.
//
// The pages read the agent's /v1 API with blocking queries (?index= and
// X-Nomad-Index) through one data layer, static/assets/api.js, which is
// the one place the event stream can replace them. A token the user
// enters is kept in localStorage and sent as X-Nomad-Token.
//
// Usage, in the API's mux:
//
//	ui.Routes(mux) // GET /ui/..., and GET / redirects to /ui/
package ui
