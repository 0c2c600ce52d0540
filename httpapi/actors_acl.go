package httpapi

import (
	"net/http"
	"strings"

	"github.com/troupe-dev/troupe/acl"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/state"
)

// filterActorTree keeps the actors r's token may see: the tree needs
// agent:read (its route's need); beneath that, an allocation's actors
// (".../allocs/<id>" and all below) need read-job in the allocation's
// namespace, a deployment's ("deployments/<id>") in the deployment's, and
// a node's ("nodes/<id>") node:read. An object that cannot be found is
// hidden. A management token, or ACLs off, sees everything.
func (s *Server) filterActorTree(r *http.Request, tree *api.ActorTree) {
	q := aclOf(r)
	if q == nil || tree == nil || q.res.acl.IsManagement() {
		return
	}
	a, snap := q.res.acl, s.snapshot()
	seen := map[string]bool{} // object key -> visible
	visible := func(path string) bool {
		key, ns, ok := s.actorObject(snap, path)
		if !ok {
			return true
		}
		if v, done := seen[key]; done {
			return v
		}
		v := false
		switch {
		case strings.HasPrefix(key, "nodes/"):
			v = a.AllowNodeRead()
		case ns != "":
			v = a.AllowNamespaceOperation(ns, acl.NsReadJob)
		}
		seen[key] = v
		return v
	}
	kept := tree.Actors[:0]
	hidden := map[string]bool{}
	for _, in := range tree.Actors {
		if !visible(in.Path) {
			hidden[in.Path] = true
			continue
		}
		kept = append(kept, in)
	}
	for _, in := range kept {
		children := in.Children[:0:0]
		for _, c := range in.Children {
			if !hidden[c] && visible(c) {
				children = append(children, c)
			}
		}
		in.Children = children
	}
	tree.Actors = kept
}

// actorObject names the object an actor's path belongs to ("allocs/<id>",
// "deployments/<id>", "nodes/<id>") and that object's namespace; ok is
// false for an actor of no such object. snap is nil on a client-only
// agent.
func (s *Server) actorObject(snap *state.Snap, path string) (key, ns string, ok bool) {
	parts := strings.Split(path, "/")
	for i := 0; i+1 < len(parts); i++ {
		id := parts[i+1]
		switch parts[i] {
		case "allocs":
			return "allocs/" + id, s.allocNamespace(snap, id), true
		case "deployments":
			if snap == nil {
				return "deployments/" + id, "", true
			}
			return "deployments/" + id, snap.DeploymentByID(id).GetNamespace(), true
		case "nodes":
			return "nodes/" + id, "", true
		}
	}
	return "", "", false
}

// allocNamespace is the namespace of allocation id, from the state snap
// on a server, from what this client runs on a client-only agent (snap
// nil); "" when neither knows it.
func (s *Server) allocNamespace(snap *state.Snap, id string) string {
	if snap != nil {
		return snap.AllocByID(id).GetNamespace()
	}
	if a, _, _, err := s.b.AllocForLogs(id); err == nil && a != nil {
		return a.GetNamespace()
	}
	return ""
}
