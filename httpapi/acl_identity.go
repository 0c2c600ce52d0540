package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/troupe-dev/troupe/acl"
	"github.com/troupe-dev/troupe/cluster/identity"
	"github.com/troupe-dev/troupe/cluster/state"
)

// Workload identities as tokens. A secret shaped as a JWT is a workload
// identity: it is verified against the keyring (signature, times) and
// accepted while its allocation is not terminal, with the ACL of Nomad's
// implicit workload rules (acl.ForWorkload). It is checked at every
// request (never cached: the allocation may stop at any time).

var (
	errBadIdentity   = &HTTPError{Code: http.StatusForbidden, Msg: "Permission denied: invalid workload identity"}
	errAllocNotAlive = &HTTPError{Code: http.StatusForbidden, Msg: "Permission denied: the workload identity's allocation is not running"}
)

// WorkloadSource checks workload identities for an agent without a
// keyring (a client-only agent) through the servers; Options.Tokens may
// implement it. ResolveWorkload answers the task a valid identity names;
// a server's refusal is a 403 *HTTPError (its reason), any other error
// means no server answered.
type WorkloadSource interface {
	ResolveWorkload(ctx context.Context, jwt string) (acl.Workload, error)
}

// resolveRemoteWorkload resolves a workload identity JWT through the
// servers, at every request as resolveWorkload does locally (the
// allocation may stop at any time).
func resolveRemoteWorkload(ctx context.Context, src WorkloadSource, jwt string) (*resolved, error) {
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	w, err := src.ResolveWorkload(ctx, jwt)
	var he *HTTPError
	switch {
	case errors.As(err, &he):
		return nil, he
	case err != nil:
		return nil, errNoTokenSource
	}
	return &resolved{acl: acl.ForWorkload(w)}, nil
}

// resolveWorkload resolves a workload identity JWT to its ACL.
func resolveWorkload(snap *state.Snap, jwt string, now time.Time) (*resolved, error) {
	res, _, err := WorkloadACL(snap, jwt, now)
	if err != nil {
		return nil, err
	}
	return &resolved{acl: res}, nil
}

// WorkloadACL verifies a workload identity JWT at now against snap (its
// keyring and its allocation, which must not be terminal) and returns the
// identity's ACL and claims. Its errors are 403 *HTTPError.
func WorkloadACL(snap *state.Snap, jwt string, now time.Time) (*acl.ACL, *identity.Claims, error) {
	c, err := identity.Verify(snap.RootKeys(), jwt, now)
	if err != nil {
		return nil, nil, errBadIdentity
	}
	al := snap.AllocByID(c.AllocationID)
	if al == nil || al.TerminalStatus() || al.GetNamespace() != c.Namespace || identity.JobID(al) != c.JobID {
		return nil, nil, errAllocNotAlive
	}
	return acl.ForWorkload(acl.Workload{Namespace: c.Namespace, Job: c.JobID, Group: c.Group, Task: c.TaskName}), c, nil
}

// jwks handles GET /.well-known/jwks.json: the public keys that verify
// workload identities, one per root key of the keyring (open to all, as
// Nomad's).
func (s *Server) jwks(w http.ResponseWriter, r *http.Request) (any, error) {
	set, err := identity.JWKS(s.b.Store().Snapshot().RootKeys())
	if err != nil {
		return nil, err
	}
	w.Header().Set("Cache-Control", "max-age=3600")
	b, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}
