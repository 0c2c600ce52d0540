package httpapi

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// fakeTokens is a TokenSource over a map of secret hashes, counting calls;
// down makes it answer as when no server does.
type fakeTokens struct {
	tokens map[string]*messages.ACLToken
	rules  map[string]string
	calls  int
	hashes [][]byte
	down   bool
}

func (f *fakeTokens) ResolveToken(_ context.Context, hash []byte) (*messages.ACLToken, []*messages.ACLPolicy, error) {
	f.calls++
	f.hashes = append(f.hashes, hash)
	if f.down {
		return nil, nil, errors.New("agent: no server answered")
	}
	names := []string{anonymousPolicy}
	var tok *messages.ACLToken
	if len(hash) > 0 {
		if tok = f.tokens[string(hash)]; tok == nil {
			return nil, nil, ErrACLTokenNotFound
		}
		names = tok.Policies
	}
	var ps []*messages.ACLPolicy
	for _, n := range names {
		if r, ok := f.rules[n]; ok {
			ps = append(ps, &messages.ACLPolicy{Name: n, Rules: r})
		}
	}
	return tok, ps, nil
}

// TestRemoteTokensCache: a client-only agent's resolutions through the
// servers are kept for the TTL and never past the token's expiry; an
// unknown token is asked again each time; an expired one is refused; no
// server answering fails closed with a 503; only the secret's hash goes
// out.
func TestRemoteTokensCache(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	src := &fakeTokens{rules: map[string]string{"agent": `agent { policy = "read" }`}, tokens: map[string]*messages.ACLToken{
		string(state.HashSecret("good")): {AccessorID: "a1", Type: "client", Policies: []string{"agent"}},
		string(state.HashSecret("brief")): {AccessorID: "a2", Type: "client", Policies: []string{"agent"},
			ExpirationTime: t0.Add(2 * time.Second).UnixNano()},
		string(state.HashSecret("root")): {AccessorID: "a3", Type: "management"},
	}}
	r := newACLResolver(Options{Tokens: src, TokenTTL: 10 * time.Second})
	ctx := context.Background()

	res, err := r.resolve(ctx, nil, "good", t0)
	require.NoError(t, err)
	require.True(t, res.acl.AllowAgentRead())
	require.False(t, res.acl.IsManagement())
	require.Equal(t, state.HashSecret("good"), src.hashes[0], "the hash goes out, not the secret")
	_, err = r.resolve(ctx, nil, "good", t0.Add(9*time.Second))
	require.NoError(t, err)
	require.Equal(t, 1, src.calls, "kept for the TTL")
	_, err = r.resolve(ctx, nil, "good", t0.Add(10*time.Second))
	require.NoError(t, err)
	require.Equal(t, 2, src.calls, "asked again once the TTL passed")

	res, err = r.resolve(ctx, nil, "root", t0)
	require.NoError(t, err)
	require.True(t, res.acl.IsManagement())

	_, err = r.resolve(ctx, nil, "brief", t0.Add(time.Second))
	require.NoError(t, err)
	_, err = r.resolve(ctx, nil, "brief", t0.Add(2*time.Second))
	require.Equal(t, errTokenExpired, err, "refused at its expiry, even within the TTL")

	calls := src.calls
	for range 2 {
		_, err = r.resolve(ctx, nil, "stolen", t0)
		require.Equal(t, errTokenNotFound, err)
	}
	require.Equal(t, calls+2, src.calls, "an unknown token is not cached")

	res, err = r.resolve(ctx, nil, "", t0)
	require.NoError(t, err)
	require.Nil(t, res.token)
	require.False(t, res.acl.AllowAgentRead(), "no anonymous policy: the anonymous token may do nothing")
	require.Empty(t, src.hashes[len(src.hashes)-1], "the anonymous token sends no hash")

	src.down = true
	_, err = r.resolve(ctx, nil, "good", t0.Add(time.Minute))
	var he *HTTPError
	require.ErrorAs(t, err, &he)
	require.Equal(t, http.StatusServiceUnavailable, he.Code, "no server answers: refused (fail closed)")
}
