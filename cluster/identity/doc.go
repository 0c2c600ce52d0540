// Package identity signs and verifies workload identities: a JWT per
// task of a placed allocation, with Nomad's claims (nomad_namespace,
// nomad_job_id, nomad_allocation_id, nomad_task, sub, aud, iat, nbf, exp,
// jti), signed with EdDSA (Ed25519) through github.com/go-jose/go-jose/v4.
//
// Each root key of the keyring (cluster/keyring) has its own signing key,
// derived from the root key with HKDF-SHA256, so nothing but the root keys
// is kept in raft and every server derives the same key pair. The JWT's
// kid is the root key's ID: Sign uses the active key, Verify accepts any
// key still in the keyring (a rotated key verifies until it is removed),
// and JWKS publishes their public keys (GET /.well-known/jwks.json).
//
// Whether the allocation still runs is the caller's check (Verify does
// not see the state).
package identity
