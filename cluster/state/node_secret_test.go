package state

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNodeSecretKeptAndGuarded: a node's SecretID is stored with it and
// survives a snapshot and restore; a registration of the node with
// another secret is refused and changes nothing, one with the same secret
// (its client again) is applied, and a node stored without a secret (from
// before secrets) takes the one its client sends.
func TestNodeSecretKeptAndGuarded(t *testing.T) {
	h := newHarness(t)
	n := testNode("n1", 1000, 1024)
	n.SecretID = "s1"
	require.Nil(t, h.apply(registerNode(n)))

	other := newHarness(t)
	require.NoError(t, other.fsm.Restore(io.NopCloser(bytes.NewReader(persist(t, h.fsm).Bytes()))))
	require.Equal(t, "s1", other.snap().NodeByID("n1").GetSecretID(), "the secret is in the snapshot")

	before := h.snap().NodeByID("n1").GetModifyIndex()
	taken := testNode("n1", 1, 1)
	taken.SecretID = "s2"
	err, _ := h.apply(registerNode(taken)).(error)
	require.ErrorIs(t, err, ErrNodeSecretMismatch)
	got := h.snap().NodeByID("n1")
	require.Equal(t, "s1", got.GetSecretID())
	require.Equal(t, before, got.GetModifyIndex(), "a refused registration changes nothing")

	again := testNode("n1", 2000, 1024)
	again.SecretID = "s1"
	require.Nil(t, h.apply(registerNode(again)))
	require.Greater(t, h.snap().NodeByID("n1").GetModifyIndex(), before)

	legacy := testNode("n2", 1000, 1024)
	require.Nil(t, h.apply(registerNode(legacy)))
	legacy = testNode("n2", 1000, 1024)
	legacy.SecretID = "t2"
	require.Nil(t, h.apply(registerNode(legacy)))
	require.Equal(t, "t2", h.snap().NodeByID("n2").GetSecretID())
}
