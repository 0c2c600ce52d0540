package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/troupe-dev/troupe/acl"
	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/httpapi"
	"github.com/troupe-dev/troupe/messages"
)

// anonymousPolicy is the policy of requests without a token.
const anonymousPolicy = "anonymous"

// resolveACLToken answers a client-only agent's token resolution from
// this server's replica: only the secret's hash comes in, and the token
// goes out as stored (its hash, never a secret).
func (a *Agent) resolveACLToken(req *messages.ResolveACLTokenRequest) *messages.ResolveACLTokenResponse {
	snap := a.store.Snapshot()
	names := []string{anonymousPolicy}
	resp := &messages.ResolveACLTokenResponse{}
	if h := req.GetSecretHash(); len(h) > 0 {
		t := snap.ACLTokenBySecretHash(h)
		if t == nil {
			resp.Error = messages.NewError(messages.CodeNotFound, "ACL token not found")
			return resp
		}
		resp.Token, names = t, t.GetPolicies()
	}
	if resp.Token.GetType() == state.ACLTokenManagement {
		return resp
	}
	for _, n := range names {
		if p := snap.ACLPolicyByName(n); p != nil {
			resp.Policies = append(resp.Policies, p)
		}
	}
	return resp
}

// serverTokens resolves a client-only agent's tokens through the servers
// (httpapi.TokenSource).
type serverTokens struct{ a *Agent }

var (
	_ httpapi.TokenSource    = serverTokens{}
	_ httpapi.WorkloadSource = serverTokens{}
)

func (s serverTokens) ResolveToken(ctx context.Context, hash []byte) (*messages.ACLToken, []*messages.ACLPolicy, error) {
	if s.a.conn == nil {
		return nil, nil, errors.New("agent: no server connection")
	}
	resp, err := s.a.conn.call(ctx, &messages.ResolveACLTokenRequest{SecretHash: hash})
	var re *remote.RemoteError
	if errors.As(err, &re) && re.NotFound() {
		return nil, nil, httpapi.ErrACLTokenNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	r, ok := resp.(*messages.ResolveACLTokenResponse)
	if !ok {
		return nil, nil, fmt.Errorf("agent: resolve ACL token: unexpected reply %T", resp)
	}
	return r.GetToken(), r.GetPolicies(), nil
}

// resolveWorkloadIdentity answers a client-only agent's check of a
// workload identity JWT with this server's keyring and allocations, as
// the HTTP API checks one here.
func (a *Agent) resolveWorkloadIdentity(req *messages.ResolveWorkloadIdentityRequest) *messages.ResolveWorkloadIdentityResponse {
	_, c, err := httpapi.WorkloadACL(a.store.Snapshot(), req.GetJWT(), a.clock.Now())
	if err != nil {
		return &messages.ResolveWorkloadIdentityResponse{Error: messages.NewError(messages.CodePermissionDenied, err.Error())}
	}
	return &messages.ResolveWorkloadIdentityResponse{Namespace: c.Namespace, JobID: c.JobID, Group: c.Group, Task: c.TaskName}
}

// ResolveWorkload checks a workload identity through the servers; their
// refusal is the HTTP API's 403 with their reason.
func (s serverTokens) ResolveWorkload(ctx context.Context, jwt string) (acl.Workload, error) {
	if s.a.conn == nil {
		return acl.Workload{}, errors.New("agent: no server connection")
	}
	resp, err := s.a.conn.call(ctx, &messages.ResolveWorkloadIdentityRequest{JWT: jwt})
	var re *remote.RemoteError
	if errors.As(err, &re) && re.ErrorCode() == messages.CodePermissionDenied {
		return acl.Workload{}, &httpapi.HTTPError{Code: http.StatusForbidden, Msg: re.Message}
	}
	if err != nil {
		return acl.Workload{}, err
	}
	r, ok := resp.(*messages.ResolveWorkloadIdentityResponse)
	if !ok {
		return acl.Workload{}, fmt.Errorf("agent: resolve workload identity: unexpected reply %T", resp)
	}
	return acl.Workload{Namespace: r.GetNamespace(), Job: r.GetJobID(), Group: r.GetGroup(), Task: r.GetTask()}, nil
}
