package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/messages"
)

// Namespace endpoints, in the shapes of Nomad's /v1/namespaces and
// /v1/namespace/:name. Writes go to the leader's HTTP API, which checks
// them against its state (the FSM checks them again).

var namespaceTables = []string{state.TableNamespaces}

func (s *Server) namespaceRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /v1/namespaces", s.wrap(s.namespaceList))
	m.HandleFunc("PUT /v1/namespace", s.wrap(s.namespaceUpsert))
	m.HandleFunc("POST /v1/namespace", s.wrap(s.namespaceUpsert))
	m.HandleFunc("GET /v1/namespace/{name}", s.wrap(s.namespaceGet))
	m.HandleFunc("PUT /v1/namespace/{name}", s.wrap(s.namespaceUpsert))
	m.HandleFunc("POST /v1/namespace/{name}", s.wrap(s.namespaceUpsert))
	m.HandleFunc("DELETE /v1/namespace/{name}", s.wrap(s.namespaceDelete))
}

// namespaceList handles GET /v1/namespaces[?prefix=], by name.
func (s *Server) namespaceList(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, namespaceTables, func(snap *state.Snap) (any, error) {
		out := []*messages.Namespace{}
		for _, ns := range snap.Namespaces() {
			if matchPrefix(r, ns.Name) && aclAllowsNamespace(r, ns.Name) {
				out = append(out, ns)
			}
		}
		return paged(w, r, out, namespaceOrder)
	})
}

// namespaceGet handles GET /v1/namespace/:name: 404 for an unknown one.
func (s *Server) namespaceGet(w http.ResponseWriter, r *http.Request) (any, error) {
	name := r.PathValue("name")
	return s.query(w, r, namespaceTables, func(snap *state.Snap) (any, error) {
		ns := snap.NamespaceByName(name)
		if ns == nil {
			return nil, codeErr(http.StatusNotFound, "namespace not found: %q", name)
		}
		return ns, nil
	})
}

// namespaceUpsert handles PUT /v1/namespace (Nomad's client: the name in
// the body) and PUT /v1/namespace/:name: it creates the namespace or
// replaces its description and meta.
func (s *Server) namespaceUpsert(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	ns, err := readNamespace(r)
	if err != nil {
		return nil, err
	}
	nss := []*messages.Namespace{ns}
	if err := state.CheckUpsertNamespaces(nss); err != nil {
		return nil, namespaceError(err)
	}
	return s.applyNamespaces(w, r, &messages.Command{Cmd: &messages.Command_UpsertNamespaces{
		UpsertNamespaces: &messages.UpsertNamespaces{Namespaces: nss}}})
}

// namespaceDelete handles DELETE /v1/namespace/:name: refused for
// "default" and while the namespace has jobs that are not dead or
// volumes.
func (s *Server) namespaceDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	names := []string{r.PathValue("name")}
	if err := state.CheckDeleteNamespaces(s.b.Store().Snapshot(), names); err != nil {
		return nil, namespaceError(err)
	}
	return s.applyNamespaces(w, r, &messages.Command{Cmd: &messages.Command_DeleteNamespaces{
		DeleteNamespaces: &messages.DeleteNamespaces{Names: names}}})
}

// nomadNamespace is the part of Nomad's Namespace body that troupe reads
// beside messages.Namespace: the fields it does not implement, refused
// when set.
type nomadNamespace struct {
	Quota                 string
	Capabilities          json.RawMessage
	NodePoolConfiguration json.RawMessage
	VaultConfiguration    json.RawMessage
	ConsulConfiguration   json.RawMessage
}

// readNamespace reads a Namespace body; the URL's name, when there is
// one, must be the body's (or fills it in when the body has none).
func readNamespace(r *http.Request) (*messages.Namespace, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	if err := jobspec.CheckJSON(body); err != nil {
		return nil, codeErr(http.StatusBadRequest, "invalid namespace: %v", err)
	}
	ns, extra := &messages.Namespace{}, &nomadNamespace{}
	for _, v := range []any{ns, extra} {
		if err := json.Unmarshal(body, v); err != nil {
			return nil, codeErr(http.StatusBadRequest, "invalid namespace: %v", err)
		}
	}
	if err := unsupportedNamespaceField(extra); err != nil {
		return nil, err
	}
	if name := r.PathValue("name"); name != "" {
		if ns.Name == "" {
			ns.Name = name
		}
		if ns.Name != name {
			return nil, codeErr(http.StatusBadRequest, "namespace name %q does not match the URL's %q", ns.Name, name)
		}
	}
	ns.CreateIndex, ns.ModifyIndex = 0, 0
	return ns, nil
}

func unsupportedNamespaceField(n *nomadNamespace) error {
	set := func(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }
	field := ""
	switch {
	case n.Quota != "":
		field = "Quota"
	case set(n.Capabilities):
		field = "Capabilities"
	case set(n.NodePoolConfiguration):
		field = "NodePoolConfiguration"
	case set(n.VaultConfiguration):
		field = "VaultConfiguration"
	case set(n.ConsulConfiguration):
		field = "ConsulConfiguration"
	default:
		return nil
	}
	return codeErr(http.StatusBadRequest, "invalid namespace: Namespace.%s is not supported by troupe", field)
}

// applyNamespaces commits a namespace command; as Nomad's, the answer is
// only the index, in X-Nomad-Index. The FSM's refusals get the codes of
// namespaceError.
func (s *Server) applyNamespaces(w http.ResponseWriter, r *http.Request, cmd *messages.Command) (any, error) {
	_, index, err := s.apply(r, cmd)
	if err != nil {
		if namespaceErrorCode(err) != 0 {
			return nil, namespaceError(err)
		}
		return nil, err
	}
	setIndex(w, index)
	return nil, nil
}

// namespaceErrorCode is the status of a refused namespace change: 404 for
// an unknown namespace, 409 for one in use, 400 for bad input or
// "default"; 0 for another error.
func namespaceErrorCode(err error) int {
	switch {
	case errors.Is(err, state.ErrNamespaceNotFound):
		return http.StatusNotFound
	case errors.Is(err, state.ErrNamespaceInUse):
		return http.StatusConflict
	case errors.Is(err, state.ErrInvalidNamespace), errors.Is(err, state.ErrNamespaceBuiltIn):
		return http.StatusBadRequest
	}
	return 0
}

// namespaceError is the error of a namespace check as an HTTP error.
func namespaceError(err error) error {
	code := namespaceErrorCode(err)
	if code == 0 {
		code = http.StatusBadRequest
	}
	return codeErr(code, "%v", err)
}
