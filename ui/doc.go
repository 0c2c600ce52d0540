// Package ui is troupe's web UI: static HTML, ES modules and CSS embedded
// in the binary and served by the agent under /ui/ (Routes), with no
// build step. The pages follow Nomad's URL shapes (/ui/jobs,
// /ui/jobs/<id>@<namespace>, /ui/allocations/<id>, /ui/clients,
// /ui/clients/<id>, /ui/csi/volumes, /ui/csi/plugins, /ui/servers) plus
// /ui/actors, the live actor tree; a client-side router draws them, so the
// handler answers index.html for every /ui/ path that is not an asset.
//
// The pages read the agent's /v1 API through one data layer,
// static/assets/api.js. What lives in raft (jobs, allocations, nodes,
// deployments, CSI volumes and plugins) they follow on the event stream:
// one /v1/event/stream per page, shared by its sections
// (static/assets/events.js), a section reading again when an event of its
// topics comes (a list of allocations instead puts the event's allocation
// in place, redrawing its row, and reads again only after the stream lost
// events), and falling back to blocking queries (?index= and
// X-Nomad-Index) when the agent refuses the stream; what does not (the
// actor tree, the servers) they follow with blocking queries. A token the
// user enters is kept in localStorage and sent as X-Nomad-Token.
//
// The agent serves the modules joined into one script (bundle.go, made
// at start: no build step) under /ui/v/<version>/, which browsers keep
// until the binary's UI changes; the modules are also served as they are
// under /ui/assets/. The actor tree draws only the rows in view.
//
// Usage, in the API's mux:
//
//	ui.Routes(mux) // GET /ui/..., and GET / redirects to /ui/
package ui
