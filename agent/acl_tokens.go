package agent

import (
	"context"
	"errors"
	"fmt"

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

var _ httpapi.TokenSource = serverTokens{}

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
