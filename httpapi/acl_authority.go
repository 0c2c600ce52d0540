package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
)

// ACL writes belong to the authoritative region. With federation and ACLs
// on, one region is authoritative (Options.AuthoritativeRegion): the
// others pull its policies and global tokens and delete, at each pull,
// what it lacks, so such a write committed in another region would
// vanish at the next pull. As Nomad's ACL endpoints do, a server of
// another region passes these writes on to the authoritative region (the
// ?region= forwarding of federation.go) and answers with its answer: the
// bootstrap, policy upserts and deletes, and the creation, update and
// deletion of global tokens. Local tokens (Global false) are written in
// their own region. A region that reads the write back sees it after its
// next pull.

// ACLAuthorityHeader marks a write passed on to the authoritative region,
// naming the region that passed it. A server that would pass it on again
// (the regions disagree on which one is authoritative) refuses it rather
// than sending it round in a loop.
const ACLAuthorityHeader = "X-Troupe-ACL-Forwarded-From"

// aclAuthority is the region r must be written in when that is not this
// one: the authoritative region for a write it owns, "" otherwise (the
// handler serves it here).
func (s *Server) aclAuthority(r *http.Request) string {
	auth := s.opts.AuthoritativeRegion
	if !s.opts.ACLEnabled || auth == "" || auth == s.opts.Region || !s.ownedByAuthority(r) {
		return ""
	}
	return auth
}

// ownedByAuthority says whether r is an ACL write that the authoritative
// region makes (see above). A body that cannot be read or decoded is left
// to the handler, which reports it.
func (s *Server) ownedByAuthority(r *http.Request) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/acl/")
	if !ok {
		return false
	}
	kind, name, _ := strings.Cut(rest, "/")
	if strings.Contains(name, "/") {
		return false
	}
	write := r.Method == http.MethodPut || r.Method == http.MethodPost
	del := r.Method == http.MethodDelete
	switch {
	case kind == "bootstrap" && name == "":
		return write
	case kind == "policy" && name != "":
		return write || del
	case kind == "token" && del:
		return name != "" && s.globalToken(name)
	case kind == "token" && write:
		var in struct {
			AccessorID string
			Global     bool
		}
		if buf, err := peekBody(r); err != nil || json.Unmarshal(buf, &in) != nil {
			return false
		}
		if name != "" {
			in.AccessorID = name
		}
		// An update keeps the token's Global (the FSM's rule): the local
		// copy says, else (not replicated yet) the body.
		return in.Global || (in.AccessorID != "" && s.globalToken(in.AccessorID))
	}
	return false
}

// globalToken says whether this region's copy of the token is global.
func (s *Server) globalToken(accessor string) bool {
	snap := s.snapshot()
	return snap != nil && snap.ACLTokenByAccessor(accessor).GetGlobal()
}

// forAuthority is r as passed on to region auth: ?region= names it (the
// receiving server would otherwise send it back here) and
// ACLAuthorityHeader this region.
func (s *Server) forAuthority(r *http.Request, auth string) *http.Request {
	out := r.Clone(r.Context())
	q := out.URL.Query()
	q.Set("region", auth)
	out.URL.RawQuery = q.Encode()
	out.Header.Set(ACLAuthorityHeader, s.opts.Region)
	return out
}
