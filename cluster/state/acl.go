package state

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/troupe-dev/troupe/messages"
)

// ACL policies and tokens (Nomad's ACL system). A token is stored with a
// SHA-256 hash of its secret (HashSecret), never the secret, and is found
// by that hash. The first management token comes from BootstrapACL, which
// succeeds once; a second is refused with the index of the first
// (ACLBootstrappedError) unless it carries that index as its reset index.

// Tables of the ACL system (Index and Wait understand them).
const (
	TableACLPolicies = "acl_policies"
	TableACLTokens   = "acl_tokens"
	tableACLBoot     = "acl_bootstrap"
)

// Token types.
const (
	ACLTokenClient     = "client"
	ACLTokenManagement = "management"
)

const idxSecret = "secret"

var (
	// ErrACLBootstrapped refuses a second bootstrap (see
	// ACLBootstrappedError for the reset index).
	ErrACLBootstrapped = errors.New("ACL bootstrap already done")
	// ErrACLPolicyNotFound answers a delete of, or a token naming, a
	// policy that is not stored.
	ErrACLPolicyNotFound = errors.New("state: ACL policy not found")
	// ErrACLTokenNotFound answers a delete or update of an unknown token.
	ErrACLTokenNotFound = errors.New("state: ACL token not found")
	// ErrBadACL refuses a malformed policy or token; the message names
	// what is wrong.
	ErrBadACL = errors.New("state: invalid ACL object")
)

// ACLBootstrappedError is ErrACLBootstrapped with the reset index that a
// reset must name.
type ACLBootstrappedError struct{ ResetIndex uint64 }

func (e *ACLBootstrappedError) Error() string {
	return fmt.Sprintf("%v (reset index: %d)", ErrACLBootstrapped, e.ResetIndex)
}

// Is makes errors.Is(err, ErrACLBootstrapped) true.
func (e *ACLBootstrappedError) Is(target error) bool { return target == ErrACLBootstrapped }

// validPolicyName is Nomad's rule for a policy name.
var validPolicyName = regexp.MustCompile(`^[a-zA-Z0-9-]{1,128}$`)

type aclBoot struct{ Index uint64 }

func init() { watchedTables = append(watchedTables, TableACLPolicies, TableACLTokens) }

func aclTables() []*memdb.TableSchema {
	tok := func(o any) *messages.ACLToken { return o.(*messages.ACLToken) }
	return []*memdb.TableSchema{
		table(TableACLPolicies, index(idxID, true, func(o any) []byte { return key1(o.(*messages.ACLPolicy).Name) })),
		table(TableACLTokens,
			index(idxID, true, func(o any) []byte { return key1(tok(o).AccessorID) }),
			index(idxSecret, true, func(o any) []byte { return key1(hex.EncodeToString(tok(o).SecretHash)) })),
		table(tableACLBoot, index(idxID, true, func(any) []byte { return key1("boot") })),
	}
}

// HashSecret is the hash under which a token's secret is stored.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// ACLPolicies are every policy, by name.
func (s *Snap) ACLPolicies() []*messages.ACLPolicy {
	return list[*messages.ACLPolicy](s.txn, TableACLPolicies, idxID)
}

// ACLPolicyByName is one policy, or nil.
func (s *Snap) ACLPolicyByName(name string) *messages.ACLPolicy {
	return first[*messages.ACLPolicy](s.txn, TableACLPolicies, idxID, name)
}

// ACLTokens are every token, by accessor ID.
func (s *Snap) ACLTokens() []*messages.ACLToken {
	return list[*messages.ACLToken](s.txn, TableACLTokens, idxID)
}

// ACLTokenByAccessor is one token, or nil.
func (s *Snap) ACLTokenByAccessor(id string) *messages.ACLToken {
	return first[*messages.ACLToken](s.txn, TableACLTokens, idxID, id)
}

// ACLTokenBySecret is the token whose secret is secret, or nil. Whether it
// has expired is the caller's question (it knows the time).
func (s *Snap) ACLTokenBySecret(secret string) *messages.ACLToken {
	return s.ACLTokenBySecretHash(HashSecret(secret))
}

// ACLTokenBySecretHash is the token whose secret hashes to hash, or nil.
func (s *Snap) ACLTokenBySecretHash(hash []byte) *messages.ACLToken {
	return first[*messages.ACLToken](s.txn, TableACLTokens, idxSecret, hex.EncodeToString(hash))
}

// ACLBootstrapIndex is the index of the bootstrap, 0 before one.
func (s *Snap) ACLBootstrapIndex() uint64 {
	if b := first[*aclBoot](s.txn, tableACLBoot, idxID, "boot"); b != nil {
		return b.Index
	}
	return 0
}

func (w *writeTxn) restoreACL(rec *messages.Snapshot) {
	for _, p := range rec.ACLPolicies {
		w.insert(TableACLPolicies, p)
	}
	for _, t := range rec.ACLTokens {
		w.insert(TableACLTokens, t)
	}
	if rec.ACLBootstrapIndex != 0 {
		w.insert(tableACLBoot, &aclBoot{Index: rec.ACLBootstrapIndex})
	}
}

func eachACL(s *Snap, cw *chunkWriter) error {
	if err := each(s.txn, TableACLPolicies, cw, func(r *messages.Snapshot, p *messages.ACLPolicy) {
		r.ACLPolicies = append(r.ACLPolicies, p)
	}); err != nil {
		return err
	}
	if err := each(s.txn, TableACLTokens, cw, func(r *messages.Snapshot, t *messages.ACLToken) {
		r.ACLTokens = append(r.ACLTokens, t)
	}); err != nil {
		return err
	}
	if i := s.ACLBootstrapIndex(); i != 0 {
		cw.rec.ACLBootstrapIndex = i
		return cw.added()
	}
	return nil
}

// applyACLCommand applies the ACL commands; ok is false for any other.
func (f *FSM) applyACLCommand(index uint64, cmd *messages.Command) (any, bool) {
	var h func(w *writeTxn) any
	switch c := cmd.Cmd.(type) {
	case *messages.Command_UpsertACLPolicies:
		h = func(w *writeTxn) any { return applyUpsertACLPolicies(w, c.UpsertACLPolicies) }
	case *messages.Command_DeleteACLPolicies:
		h = func(w *writeTxn) any { return applyDeleteACLPolicies(w, c.DeleteACLPolicies) }
	case *messages.Command_UpsertACLTokens:
		h = func(w *writeTxn) any { return applyUpsertACLTokens(w, c.UpsertACLTokens) }
	case *messages.Command_DeleteACLTokens:
		h = func(w *writeTxn) any { return applyDeleteACLTokens(w, c.DeleteACLTokens) }
	case *messages.Command_BootstrapACL:
		h = func(w *writeTxn) any { return applyBootstrapACL(w, c.BootstrapACL) }
	case *messages.Command_ExpireACLTokens:
		h = applyExpireACLTokens
	default:
		return nil, false
	}
	return f.run(index, cmd.Time, h), true
}
