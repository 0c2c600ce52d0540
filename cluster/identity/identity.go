package identity

import (
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	uuid "github.com/hashicorp/go-uuid"

	"github.com/troupe-dev/troupe/cluster/keyring"
	"github.com/troupe-dev/troupe/messages"
)

// DefaultName is the default identity's name.
const DefaultName = "default"

// DefaultAudience is the default identity's audience (Nomad's).
const DefaultAudience = "nomad.io"

// Claims are a workload identity's claims, in Nomad's names.
type Claims struct {
	Namespace    string `json:"nomad_namespace"`
	JobID        string `json:"nomad_job_id"`
	AllocationID string `json:"nomad_allocation_id"`
	TaskName     string `json:"nomad_task,omitempty"`
	jwt.Claims
	// Group is not a claim: it is read from the subject (Nomad's
	// region:namespace:job:group:task:identity).
	Group string `json:"-"`
	// Identity is the identity's name, also read from the subject.
	Identity string `json:"-"`
}

// ForTask are the claims of identity id of task of alloc, issued at now
// in region; a TTL makes them expire.
func ForTask(region string, alloc *messages.Allocation, task string, id *messages.TaskIdentity, now time.Time) (*Claims, error) {
	jti, err := uuid.GenerateUUID()
	if err != nil {
		return nil, fmt.Errorf("identity: jti: %w", err)
	}
	name := NameOf(id)
	aud := id.GetAudience()
	if len(aud) == 0 && name == DefaultName {
		aud = []string{DefaultAudience}
	}
	c := &Claims{Namespace: alloc.GetNamespace(), JobID: JobID(alloc), AllocationID: alloc.GetID(), TaskName: task,
		Group: alloc.GetTaskGroup(), Identity: name}
	c.Subject = strings.Join([]string{region, c.Namespace, c.JobID, c.Group, task, name}, ":")
	c.Audience, c.ID = jwt.Audience(aud), jti
	c.IssuedAt, c.NotBefore = jwt.NewNumericDate(now), jwt.NewNumericDate(now)
	if ttl := time.Duration(id.GetTTL()); ttl > 0 {
		c.Expiry = jwt.NewNumericDate(now.Add(ttl))
	}
	return c, nil
}

// JobID is the job an allocation's identities name: a periodic or
// dispatched job's parent (as Nomad's, so that every child reads the
// parent's variables), else the allocation's job.
func JobID(alloc *messages.Allocation) string {
	if p := alloc.GetJob().GetParentID(); p != "" {
		return p
	}
	return alloc.GetJobID()
}

// NameOf is an identity block's name ("default" when unnamed or nil).
func NameOf(id *messages.TaskIdentity) string {
	if id.GetName() == "" {
		return DefaultName
	}
	return id.GetName()
}

// Sign signs c with the active key of keys.
func Sign(keys []*messages.RootKey, c *Claims) (string, error) {
	root := keyring.Active(keys)
	if root == nil {
		return "", ErrNoKey
	}
	priv, err := signingKey(root)
	if err != nil {
		return "", err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: priv},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), root.KeyID))
	if err != nil {
		return "", fmt.Errorf("identity: signer: %w", err)
	}
	tok, err := jwt.Signed(signer).Claims(c).Serialize()
	if err != nil {
		return "", fmt.Errorf("identity: sign: %w", err)
	}
	return tok, nil
}

// LooksLikeJWT reports whether a secret is shaped as a JWT (three
// base64url parts), not an ACL token's UUID.
func LooksLikeJWT(s string) bool { return strings.Count(s, ".") == 2 && len(s) > 40 }

// Verify checks token's signature against the key of keys its kid names
// and its claims' times at now, and returns its claims.
func Verify(keys []*messages.RootKey, token string, now time.Time) (*Claims, error) {
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(tok.Headers) != 1 {
		return nil, fmt.Errorf("%w: %d signatures", ErrInvalid, len(tok.Headers))
	}
	kid := tok.Headers[0].KeyID
	var root *messages.RootKey
	for _, k := range keys {
		if k.GetKeyID() == kid {
			root = k
		}
	}
	if root == nil {
		return nil, fmt.Errorf("%w: unknown key %q", ErrInvalid, kid)
	}
	priv, err := signingKey(root)
	if err != nil {
		return nil, err
	}
	var c Claims
	if err := tok.Claims(priv.Public(), &c); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Time: now}, 0); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	parts := strings.Split(c.Subject, ":")
	if len(parts) != 6 || c.AllocationID == "" || c.JobID == "" {
		return nil, fmt.Errorf("%w: not a workload identity", ErrInvalid)
	}
	c.Group, c.Identity = parts[3], parts[5]
	return &c, nil
}

// JWKS is the public keys of keys, as /.well-known/jwks.json serves them.
func JWKS(keys []*messages.RootKey) (*jose.JSONWebKeySet, error) {
	set := &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for _, k := range keys {
		priv, err := signingKey(k)
		if err != nil {
			return nil, err
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: priv.Public(), KeyID: k.KeyID,
			Algorithm: string(jose.EdDSA), Use: "sig"})
	}
	return set, nil
}

// hkdfInfo binds the derived key to its use.
const hkdfInfo = "troupe workload identity ed25519 v1"

// signingKey is root's Ed25519 key, derived from its bytes.
func signingKey(root *messages.RootKey) (ed25519.PrivateKey, error) {
	if len(root.GetKey()) != keyring.KeySize {
		return nil, fmt.Errorf("identity: root key %q has %d bytes", root.GetKeyID(), len(root.GetKey()))
	}
	seed, err := hkdf.Key(sha256.New, root.Key, []byte(root.KeyID), hkdfInfo, ed25519.SeedSize)
	if err != nil {
		return nil, fmt.Errorf("identity: derive key: %w", err)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}
