// Package keyring seals and opens the items of Nomad Variables with the
// servers' root keys: AES-256-GCM from the standard library, a fresh
// crypto/rand nonce per seal, and the variable's namespace and path as
// additional data (a ciphertext moved to another path does not open).
//
// The leader calls NewRootKey to make a key (proposed to raft in a
// RotateKeyring) and Seal to encrypt a variable's items before it
// proposes the VarApply; the FSM stores only the sealed VariableData.
// Reads call Open with the key named by the data's KeyID.
//
// The keys live in raft next to the ciphertext they protect (the log and
// snapshots hold both), unlike Nomad, which keeps them in a keystore on
// each server's disk, outside raft.
package keyring
