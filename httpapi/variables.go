package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/keyring"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// Variable endpoints, in the shapes of Nomad's /v1/var/:path, /v1/vars
// and /v1/operator/keyring. Writes run on the leader, which validates the
// plaintext, seals the items with the active root key (making the first
// key when the keyring is empty) and proposes only the ciphertext; reads
// open it with the key the variable names.
//
// The namespace is ?namespace= ("default" when absent; "*" only lists):
// a write in a namespace that does not exist is a 400, here and again in
// the FSM.

var (
	variableTables = []string{state.TableVariables, state.TableRootKeys}
	rootKeyTables  = []string{state.TableRootKeys}
)

// errAnswered says the handler wrote its answer itself (a 409 with a
// body).
var errAnswered = errProxied

// lockParams are Nomad's variable lock operations, which troupe lacks.
var lockParams = []string{"lock-acquire", "lock-release", "lock-renew"}

func (s *Server) variableRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /v1/vars", s.wrap(s.varList))
	m.HandleFunc("GET /v1/var/{path...}", s.wrap(oneNamespace(s.varGet)))
	m.HandleFunc("PUT /v1/var/{path...}", s.wrap(oneNamespace(s.varPut)))
	m.HandleFunc("POST /v1/var/{path...}", s.wrap(oneNamespace(s.varPut)))
	m.HandleFunc("DELETE /v1/var/{path...}", s.wrap(oneNamespace(s.varDelete)))
	m.HandleFunc("PUT /v1/operator/keyring/rotate", s.wrap(s.keyringRotate))
	m.HandleFunc("POST /v1/operator/keyring/rotate", s.wrap(s.keyringRotate))
	m.HandleFunc("GET /v1/operator/keyring/keys", s.wrap(s.keyringList))
}

// varNamespace is ?namespace=, "default" when absent ("*" is kept: it
// lists every namespace; oneNamespace refuses it elsewhere).
func varNamespace(r *http.Request) string {
	if ns := r.URL.Query().Get("namespace"); ns != "" {
		return ns
	}
	return state.NamespaceDefault
}

// varPathOf is the URL's variable path, trimmed as Nomad's client trims
// it, and checked.
func varPathOf(r *http.Request) (string, error) {
	path := strings.Trim(r.PathValue("path"), " /")
	if err := state.ValidateVariablePath(path); err != nil {
		return "", codeErr(http.StatusBadRequest, "%v", err)
	}
	return path, nil
}

// casOf is ?cas= (parsed and checked by parseQuery) and whether it was
// given.
func casOf(r *http.Request) (uint64, bool) {
	v, given := r.URL.Query()["cas"]
	if !given {
		return 0, false
	}
	cas, _ := strconv.ParseUint(v[0], 10, 64)
	return cas, true
}

// varList handles GET /v1/vars[?prefix=&namespace=]: metadata only.
func (s *Server) varList(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, variableTables, func(snap *state.Snap) (any, error) {
		out := []*api.VariableMetadata{}
		for _, v := range snap.VariablesByPrefix(varNamespace(r), r.URL.Query().Get("prefix")) {
			if !aclAllowsVar(r, v.Namespace, v.Path) {
				continue
			}
			out = append(out, varMeta(v))
		}
		return paged(w, r, out, varOrder)
	})
}

// varGet handles GET /v1/var/:path: 404 when there is none.
func (s *Server) varGet(w http.ResponseWriter, r *http.Request) (any, error) {
	path, err := varPathOf(r)
	if err != nil {
		return nil, err
	}
	return s.query(w, r, variableTables, func(snap *state.Snap) (any, error) {
		v := snap.Variable(varNamespace(r), path)
		if v == nil {
			return nil, codeErr(http.StatusNotFound, "variable not found")
		}
		return openVariable(snap, v)
	})
}

// varPut handles PUT /v1/var/:path[?cas=] with a Variable body (its
// Items; the path and namespace are the URL's). A check-and-set that
// does not match answers 409 with the variable in the way.
func (s *Server) varPut(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := refuseLocks(r); err != nil {
		return nil, err
	}
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	path, err := varPathOf(r)
	if err != nil {
		return nil, err
	}
	var in api.Variable
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	ns := varNamespace(r)
	if err := state.ValidateVariable(ns, path, in.Items); err != nil {
		return nil, codeErr(http.StatusBadRequest, "%v", err)
	}
	if err := s.checkNamespace("variable "+quote(path), ns); err != nil {
		return nil, err
	}
	key, err := s.activeRootKey(r)
	if err != nil {
		return nil, err
	}
	data, err := keyring.Seal(key, ns, path, in.Items)
	if err != nil {
		return nil, err
	}
	cas, check := casOf(r)
	res, index, err := s.apply(r, &messages.Command{Cmd: &messages.Command_VarApply{VarApply: &messages.VarApply{
		Op: messages.VarOp_VAR_OP_SET, Var: &messages.Variable{Namespace: ns, Path: path, Data: data},
		CheckIndex: check, CAS: cas}}})
	if err != nil {
		return nil, s.varApplyError(w, err)
	}
	setIndex(w, index)
	v, ok := res.(*messages.Variable)
	if !ok { // forwarded after a change of leader: read it back
		if v = s.b.Store().Snapshot().Variable(ns, path); v == nil {
			return nil, codeErr(http.StatusNotFound, "variable not found")
		}
	}
	out := varOut(v)
	out.Items = in.Items
	return out, nil
}

// varDelete handles DELETE /v1/var/:path[?cas=]; deleting a variable that
// does not exist succeeds.
func (s *Server) varDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	path, err := varPathOf(r)
	if err != nil {
		return nil, err
	}
	cas, check := casOf(r)
	_, index, err := s.apply(r, &messages.Command{Cmd: &messages.Command_VarApply{VarApply: &messages.VarApply{
		Op: messages.VarOp_VAR_OP_DELETE, Var: &messages.Variable{Namespace: varNamespace(r), Path: path},
		CheckIndex: check, CAS: cas}}})
	if err != nil {
		return nil, s.varApplyError(w, err)
	}
	setIndex(w, index)
	return nil, nil
}

// varApplyError answers a refused VarApply: a CAS conflict is a 409 whose
// body is the variable in the way (empty when there is none), as Nomad's;
// bad input a 400.
func (s *Server) varApplyError(w http.ResponseWriter, err error) error {
	var cas *state.VariableCASError
	switch {
	case errors.As(err, &cas):
		out := &api.Variable{}
		if cas.Current != nil {
			opened, oerr := openVariable(s.b.Store().Snapshot(), cas.Current)
			if oerr != nil {
				return oerr
			}
			out = opened
		}
		setIndex(w, max(cas.Current.GetModifyIndex(), 1))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		_ = writeJSON(w, out, false)
		return errAnswered
	case errors.Is(err, state.ErrInvalidVariable), errors.Is(err, state.ErrVariableTooLarge):
		return codeErr(http.StatusBadRequest, "%v", err)
	}
	return namespaceRefused(err)
}

func refuseLocks(r *http.Request) error {
	for _, p := range lockParams {
		if _, given := r.URL.Query()[p]; given {
			return codeErr(http.StatusBadRequest, "variable locks (?%s) are not supported", p)
		}
	}
	return nil
}

// openVariable is v with its items decrypted.
func openVariable(snap *state.Snap, v *messages.Variable) (*api.Variable, error) {
	items, err := keyring.Open(snap.RootKeys(), v.Namespace, v.Path, v.Data)
	if err != nil {
		return nil, err
	}
	out := varOut(v)
	out.Items = items
	return out, nil
}

func varOut(v *messages.Variable) *api.Variable {
	return &api.Variable{Namespace: v.Namespace, Path: v.Path, CreateIndex: v.CreateIndex, ModifyIndex: v.ModifyIndex,
		CreateTime: v.CreateTime, ModifyTime: v.ModifyTime}
}

func varMeta(v *messages.Variable) *api.VariableMetadata {
	return &api.VariableMetadata{Namespace: v.Namespace, Path: v.Path, CreateIndex: v.CreateIndex, ModifyIndex: v.ModifyIndex,
		CreateTime: v.CreateTime, ModifyTime: v.ModifyTime}
}
