package identity

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/keyring"
	"github.com/troupe-dev/troupe/messages"
)

var (
	now   = time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	alloc = &messages.Allocation{ID: "a1", Namespace: "ns1", JobID: "web", TaskGroup: "g"}
)

func rootKey(t *testing.T) *messages.RootKey {
	t.Helper()
	k, err := keyring.NewRootKey(now)
	require.NoError(t, err)
	return k
}

func TestSignVerify(t *testing.T) {
	k := rootKey(t)
	c, err := ForTask("global", alloc, "t", &messages.TaskIdentity{Env: true}, now)
	require.NoError(t, err)
	tok, err := Sign([]*messages.RootKey{k}, c)
	require.NoError(t, err)
	require.True(t, LooksLikeJWT(tok))
	got, err := Verify([]*messages.RootKey{k}, tok, now.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, "ns1", got.Namespace)
	require.Equal(t, "web", got.JobID)
	require.Equal(t, "a1", got.AllocationID)
	require.Equal(t, "t", got.TaskName)
	require.Equal(t, "g", got.Group)
	require.Equal(t, DefaultName, got.Identity)
	require.Equal(t, "global:ns1:web:g:t:default", got.Subject)
	require.Equal(t, jwt.Audience{DefaultAudience}, got.Audience)
	require.Nil(t, got.Expiry, "the default identity without a ttl does not expire")

	// The claims as Nomad names them, in the payload.
	parts := strings.Split(tok, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(payload, &raw))
	for _, name := range []string{"nomad_namespace", "nomad_job_id", "nomad_allocation_id", "nomad_task", "sub", "aud", "iat", "nbf", "jti"} {
		require.Contains(t, raw, name)
	}
}

func TestVerifyRefuses(t *testing.T) {
	k, other := rootKey(t), rootKey(t)
	keys := []*messages.RootKey{k}
	c, err := ForTask("global", alloc, "t", &messages.TaskIdentity{TTL: int64(time.Minute), Audience: []string{"x"}}, now)
	require.NoError(t, err)
	tok, err := Sign(keys, c)
	require.NoError(t, err)
	_, err = Verify(keys, tok, now.Add(30*time.Second))
	require.NoError(t, err)

	cases := map[string]struct {
		keys []*messages.RootKey
		tok  string
		at   time.Time
	}{
		"expired":      {keys, tok, now.Add(2 * time.Minute)},
		"not yet":      {keys, tok, now.Add(-time.Minute)},
		"key removed":  {[]*messages.RootKey{other}, tok, now},
		"tampered":     {keys, tok[:len(tok)-4] + "AAAA", now},
		"garbage":      {keys, "a.b.c", now},
		"other signer": {keys, forge(t, k, other, c), now},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Verify(tc.keys, tc.tok, tc.at)
			require.ErrorIs(t, err, ErrInvalid)
		})
	}
}

// forge signs c with other's bytes under k's ID: the signature cannot
// verify with k.
func forge(t *testing.T, k, other *messages.RootKey, c *Claims) string {
	t.Helper()
	forged := &messages.RootKey{KeyID: k.KeyID, Key: other.Key, State: messages.RootKeyState_ROOT_KEY_STATE_ACTIVE}
	tok, err := Sign([]*messages.RootKey{forged}, c)
	require.NoError(t, err)
	return tok
}

// TestRotation: after a rotation new identities are signed with the new
// key and the old ones still verify, until the old key is removed.
func TestRotation(t *testing.T) {
	old := rootKey(t)
	c, err := ForTask("global", alloc, "t", nil, now)
	require.NoError(t, err)
	before, err := Sign([]*messages.RootKey{old}, c)
	require.NoError(t, err)

	old.State = messages.RootKeyState_ROOT_KEY_STATE_INACTIVE
	fresh := rootKey(t)
	keys := []*messages.RootKey{old, fresh}
	after, err := Sign(keys, c)
	require.NoError(t, err)
	for _, tok := range []string{before, after} {
		_, err := Verify(keys, tok, now)
		require.NoError(t, err)
	}
	h, err := jwt.ParseSigned(after, []jose.SignatureAlgorithm{jose.EdDSA})
	require.NoError(t, err)
	require.Equal(t, fresh.KeyID, h.Headers[0].KeyID)

	_, err = Verify([]*messages.RootKey{fresh}, before, now)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = Sign([]*messages.RootKey{old}, c)
	require.ErrorIs(t, err, ErrNoKey)
}

// TestJWKS: a JWT verifies against the published key set alone.
func TestJWKS(t *testing.T) {
	k := rootKey(t)
	c, err := ForTask("global", alloc, "t", nil, now)
	require.NoError(t, err)
	tok, err := Sign([]*messages.RootKey{k}, c)
	require.NoError(t, err)
	set, err := JWKS([]*messages.RootKey{k})
	require.NoError(t, err)
	b, err := json.Marshal(set)
	require.NoError(t, err)
	var back jose.JSONWebKeySet
	require.NoError(t, json.Unmarshal(b, &back))
	require.Len(t, back.Keys, 1)
	require.Equal(t, "EdDSA", back.Keys[0].Algorithm)
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.EdDSA})
	require.NoError(t, err)
	keys := back.Key(parsed.Headers[0].KeyID)
	require.Len(t, keys, 1)
	var out map[string]any
	require.NoError(t, parsed.Claims(keys[0].Key, &out))
	require.Equal(t, "a1", out["nomad_allocation_id"])
}

// TestChildJobNamesParent: a periodic or dispatched child's identity
// names its parent job, as Nomad's do.
func TestChildJobNamesParent(t *testing.T) {
	child := &messages.Allocation{ID: "a2", Namespace: "ns1", JobID: "batch/periodic-1700000000", TaskGroup: "g",
		Job: &messages.Job{ID: "batch/periodic-1700000000", ParentID: "batch"}}
	c, err := ForTask("global", child, "t", nil, now)
	require.NoError(t, err)
	require.Equal(t, "batch", c.JobID)
	require.Equal(t, "global:ns1:batch:g:t:default", c.Subject)
	require.Equal(t, "web", JobID(alloc))
}
