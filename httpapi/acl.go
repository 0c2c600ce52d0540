package httpapi

import (
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	uuid "github.com/hashicorp/go-uuid"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// The /v1/acl endpoints, in Nomad's paths and shapes. With ACLs off each
// answers 400 "ACL support disabled". Secrets are answered once, when a
// token is created; the servers keep only their hash.

func (s *Server) aclRoutes(m *http.ServeMux) {
	for _, method := range []string{"PUT", "POST"} {
		m.HandleFunc(method+" /v1/acl/bootstrap", s.wrap(s.aclOn(s.aclBootstrap)))
		m.HandleFunc(method+" /v1/acl/policy/{name}", s.wrap(s.aclOn(s.atLeader(s.aclPolicyPut))))
		m.HandleFunc(method+" /v1/acl/token", s.wrap(s.aclOn(s.atLeader(s.aclTokenCreate))))
		m.HandleFunc(method+" /v1/acl/token/{accessor}", s.wrap(s.aclOn(s.atLeader(s.aclTokenUpdate))))
	}
	m.HandleFunc("GET /v1/acl/policies", s.wrap(s.aclOn(s.aclPolicyList)))
	m.HandleFunc("GET /v1/acl/policy/{name}", s.wrap(s.aclOn(s.aclPolicyGet)))
	m.HandleFunc("DELETE /v1/acl/policy/{name}", s.wrap(s.aclOn(s.atLeader(s.aclPolicyDelete))))
	m.HandleFunc("GET /v1/acl/tokens", s.wrap(s.aclOn(s.aclTokenList)))
	m.HandleFunc("GET /v1/acl/token/self", s.wrap(s.aclOn(s.aclTokenSelf)))
	m.HandleFunc("GET /v1/acl/token/{accessor}", s.wrap(s.aclOn(s.aclTokenGet)))
	m.HandleFunc("DELETE /v1/acl/token/{accessor}", s.wrap(s.aclOn(s.atLeader(s.aclTokenDelete))))
}

func (s *Server) aclOn(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request) (any, error) {
		if s.acls == nil {
			return nil, errACLDisabled
		}
		return h(w, r)
	}
}

// atLeader passes a write on to the leader when another server leads.
func (s *Server) atLeader(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request) (any, error) {
		if s.writeToLeader(w, r) {
			return nil, errProxied
		}
		return h(w, r)
	}
}

var aclTables = []string{state.TableACLPolicies, state.TableACLTokens}

// aclBootstrap handles POST /v1/acl/bootstrap on the leader: the one
// management token, again only when the reset file names the index of
// the bootstrap done.
func (s *Server) aclBootstrap(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	var in api.ACLBootstrapRequest
	if r.ContentLength != 0 {
		if err := decodeBody(r, &in); err != nil {
			return nil, err
		}
	}
	t, secret, err := newToken(state.ACLTokenManagement, in.BootstrapSecret)
	if err != nil {
		return nil, err
	}
	t.Name, t.Global = "Bootstrap Token", true
	reset := s.resetIndex()
	if _, _, err := s.apply(r, &messages.Command{Cmd: &messages.Command_BootstrapACL{
		BootstrapACL: &messages.BootstrapACL{Token: t, ResetIndex: reset}}}); err != nil {
		if errors.Is(err, state.ErrACLBootstrapped) {
			return nil, codeErr(http.StatusBadRequest, "%v", err)
		}
		return nil, aclWriteErr(err)
	}
	if reset != 0 {
		_ = os.Remove(s.opts.ACLResetFile) // used: a later bootstrap needs a new one
	}
	return s.tokenOut(t, secret), nil
}

// resetIndex reads the reset file (0: none).
func (s *Server) resetIndex() uint64 {
	if s.opts.ACLResetFile == "" {
		return 0
	}
	b, err := os.ReadFile(s.opts.ACLResetFile)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		s.log.Warn("acl bootstrap reset file does not hold an index", "file", s.opts.ACLResetFile)
		return 0
	}
	return n
}

func newToken(typ, secret string) (*messages.ACLToken, string, error) {
	accessor, err := uuid.GenerateUUID()
	if err != nil {
		return nil, "", err
	}
	if secret == "" {
		if secret, err = uuid.GenerateUUID(); err != nil {
			return nil, "", err
		}
	}
	return &messages.ACLToken{AccessorID: accessor, SecretHash: state.HashSecret(secret), Type: typ}, secret, nil
}

// aclWriteErr maps the FSM's refusals to 4xx.
func aclWriteErr(err error) error {
	switch {
	case errors.Is(err, state.ErrBadACL):
		return codeErr(http.StatusBadRequest, "%v", err)
	case errors.Is(err, state.ErrACLPolicyNotFound), errors.Is(err, state.ErrACLTokenNotFound):
		return codeErr(http.StatusNotFound, "%v", err)
	}
	return err
}

func (s *Server) aclPolicyList(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, aclTables, func(snap *state.Snap) (any, error) {
		out := []*api.ACLPolicyListStub{}
		for _, p := range snap.ACLPolicies() {
			if matchPrefix(r, p.Name) {
				out = append(out, &api.ACLPolicyListStub{Name: p.Name, Description: p.Description,
					CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex})
			}
		}
		return out, nil
	})
}

func (s *Server) aclPolicyGet(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, aclTables, func(snap *state.Snap) (any, error) {
		p := snap.ACLPolicyByName(r.PathValue("name"))
		if p == nil {
			return nil, codeErr(http.StatusNotFound, "ACL policy not found")
		}
		return policyOut(p), nil
	})
}

// policyOut is a policy in Nomad's shape.
func policyOut(p *messages.ACLPolicy) *api.ACLPolicy {
	return &api.ACLPolicy{Name: p.Name, Description: p.Description, Rules: p.Rules,
		CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex}
}

func (s *Server) aclPolicyPut(w http.ResponseWriter, r *http.Request) (any, error) {
	var in api.ACLPolicy
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	if in.Name == "" {
		in.Name = name
	}
	if in.Name != name {
		return nil, codeErr(http.StatusBadRequest, "policy name %q does not match the URL's %q", in.Name, name)
	}
	p := &messages.ACLPolicy{Name: in.Name, Description: in.Description, Rules: in.Rules}
	if err := state.CheckACLPolicy(p); err != nil {
		return nil, codeErr(http.StatusBadRequest, "%v", err)
	}
	_, idx, err := s.apply(r, &messages.Command{Cmd: &messages.Command_UpsertACLPolicies{
		UpsertACLPolicies: &messages.UpsertACLPolicies{Policies: []*messages.ACLPolicy{p}}}})
	if err != nil {
		return nil, aclWriteErr(err)
	}
	setIndex(w, idx)
	return nil, nil
}

func (s *Server) aclPolicyDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	_, idx, err := s.apply(r, &messages.Command{Cmd: &messages.Command_DeleteACLPolicies{
		DeleteACLPolicies: &messages.DeleteACLPolicies{Names: []string{r.PathValue("name")}}}})
	if err != nil {
		return nil, aclWriteErr(err)
	}
	setIndex(w, idx)
	return nil, nil
}

func (s *Server) aclTokenList(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, aclTables, func(snap *state.Snap) (any, error) {
		out := []*api.ACLTokenListStub{}
		for _, t := range snap.ACLTokens() {
			if !matchPrefix(r, t.AccessorID) {
				continue
			}
			o := s.tokenOut(t, "")
			out = append(out, &api.ACLTokenListStub{AccessorID: o.AccessorID, Name: o.Name, Type: o.Type,
				Policies: o.Policies, Global: o.Global, CreateTime: o.CreateTime, ExpirationTime: o.ExpirationTime,
				CreateIndex: o.CreateIndex, ModifyIndex: o.ModifyIndex})
		}
		return out, nil
	})
}

func (s *Server) aclTokenGet(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, aclTables, func(snap *state.Snap) (any, error) {
		t := snap.ACLTokenByAccessor(r.PathValue("accessor"))
		if t == nil {
			return nil, codeErr(http.StatusNotFound, "ACL token not found")
		}
		return s.tokenOut(t, ""), nil
	})
}

// aclTokenSelf answers the request's own token (the route needs one).
func (s *Server) aclTokenSelf(w http.ResponseWriter, r *http.Request) (any, error) {
	q := aclOf(r)
	if q == nil || q.res.token == nil {
		return nil, errTokenNotFound
	}
	setIndex(w, max(1, q.res.token.ModifyIndex))
	return s.tokenOut(q.res.token, ""), nil
}

func (s *Server) aclTokenCreate(w http.ResponseWriter, r *http.Request) (any, error) {
	var in api.ACLToken
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	if in.AccessorID != "" {
		return s.aclTokenWrite(w, r, &in)
	}
	if len(in.Roles) != 0 {
		return nil, codeErr(http.StatusBadRequest, "ACL roles are not supported: token Roles must be empty")
	}
	if in.ExpirationTime != nil {
		return nil, codeErr(http.StatusBadRequest, "ExpirationTime is not supported: set ExpirationTTL")
	}
	if in.Type == "" {
		in.Type = state.ACLTokenClient
	}
	t, secret, err := newToken(in.Type, in.SecretID)
	if err != nil {
		return nil, err
	}
	t.Name, t.Policies, t.Global, t.ExpirationTTL = in.Name, in.Policies, in.Global, int64(in.ExpirationTTL)
	t.CreateTime = s.b.Now().UnixNano()
	if err := s.upsertToken(w, r, t); err != nil {
		return nil, err
	}
	stored := s.b.Store().Snapshot().ACLTokenByAccessor(t.AccessorID)
	if stored == nil {
		stored = t
	}
	return s.tokenOut(stored, secret), nil
}

func (s *Server) aclTokenUpdate(w http.ResponseWriter, r *http.Request) (any, error) {
	var in api.ACLToken
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	if in.AccessorID == "" {
		in.AccessorID = r.PathValue("accessor")
	}
	if in.AccessorID != r.PathValue("accessor") {
		return nil, codeErr(http.StatusBadRequest, "token accessor ID %q does not match the URL's %q", in.AccessorID, r.PathValue("accessor"))
	}
	return s.aclTokenWrite(w, r, &in)
}

// aclTokenWrite updates an existing token's name and policies.
func (s *Server) aclTokenWrite(w http.ResponseWriter, r *http.Request, in *api.ACLToken) (any, error) {
	old := s.b.Store().Snapshot().ACLTokenByAccessor(in.AccessorID)
	if old == nil {
		return nil, codeErr(http.StatusNotFound, "ACL token not found")
	}
	if len(in.Roles) != 0 {
		return nil, codeErr(http.StatusBadRequest, "ACL roles are not supported: token Roles must be empty")
	}
	if in.Type == "" {
		in.Type = old.Type
	}
	t := &messages.ACLToken{AccessorID: old.AccessorID, Name: in.Name, Type: in.Type, Policies: in.Policies}
	if err := s.upsertToken(w, r, t); err != nil {
		return nil, err
	}
	return s.tokenOut(s.b.Store().Snapshot().ACLTokenByAccessor(t.AccessorID), ""), nil
}

func (s *Server) upsertToken(w http.ResponseWriter, r *http.Request, t *messages.ACLToken) error {
	_, idx, err := s.apply(r, &messages.Command{Cmd: &messages.Command_UpsertACLTokens{
		UpsertACLTokens: &messages.UpsertACLTokens{Tokens: []*messages.ACLToken{t}}}})
	if err != nil {
		return aclWriteErr(err)
	}
	setIndex(w, idx)
	return s.b.Store().WaitApplied(r.Context(), idx)
}

func (s *Server) aclTokenDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	_, idx, err := s.apply(r, &messages.Command{Cmd: &messages.Command_DeleteACLTokens{
		DeleteACLTokens: &messages.DeleteACLTokens{AccessorIDs: []string{r.PathValue("accessor")}}}})
	if err != nil {
		return nil, aclWriteErr(err)
	}
	setIndex(w, idx)
	return nil, nil
}

// tokenOut is a token in Nomad's shape; secret is "" but where the
// token was just made.
func (s *Server) tokenOut(t *messages.ACLToken, secret string) *api.ACLToken {
	out := &api.ACLToken{AccessorID: t.AccessorID, SecretID: secret, Name: t.Name, Type: t.Type,
		Policies: t.Policies, Global: t.Global, CreateTime: time.Unix(0, t.CreateTime).UTC(),
		ExpirationTTL: api.Duration(t.ExpirationTTL), CreateIndex: t.CreateIndex, ModifyIndex: t.ModifyIndex}
	if out.Policies == nil {
		out.Policies = []string{}
	}
	if t.ExpirationTime != 0 {
		e := time.Unix(0, t.ExpirationTime).UTC()
		out.ExpirationTime = &e
	}
	return out
}

// expireTokens deletes the tokens expired now (a forced collection).
func (s *Server) expireTokens(r *http.Request) error {
	_, _, err := s.apply(r, &messages.Command{Cmd: &messages.Command_ExpireACLTokens{ExpireACLTokens: &messages.ExpireACLTokens{}}})
	return err
}
