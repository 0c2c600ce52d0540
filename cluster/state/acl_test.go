package state

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

func aclCmd(c any) *messages.Command {
	cmd := &messages.Command{}
	switch v := c.(type) {
	case *messages.UpsertACLPolicies:
		cmd.Cmd = &messages.Command_UpsertACLPolicies{UpsertACLPolicies: v}
	case *messages.DeleteACLPolicies:
		cmd.Cmd = &messages.Command_DeleteACLPolicies{DeleteACLPolicies: v}
	case *messages.UpsertACLTokens:
		cmd.Cmd = &messages.Command_UpsertACLTokens{UpsertACLTokens: v}
	case *messages.DeleteACLTokens:
		cmd.Cmd = &messages.Command_DeleteACLTokens{DeleteACLTokens: v}
	case *messages.BootstrapACL:
		cmd.Cmd = &messages.Command_BootstrapACL{BootstrapACL: v}
	case *messages.ExpireACLTokens:
		cmd.Cmd = &messages.Command_ExpireACLTokens{ExpireACLTokens: v}
	}
	return cmd
}

func mgmtToken(id, secret string) *messages.ACLToken {
	return &messages.ACLToken{AccessorID: id, SecretHash: HashSecret(secret), Type: ACLTokenManagement, Name: id}
}

func TestACLBootstrapOnceThenReset(t *testing.T) {
	h := newHarness(t)
	require.Nil(t, h.apply(aclCmd(&messages.BootstrapACL{Token: mgmtToken("a1", "s1")})))
	first := h.index
	require.Equal(t, first, h.snap().ACLBootstrapIndex())

	r := h.apply(aclCmd(&messages.BootstrapACL{Token: mgmtToken("a2", "s2")}))
	err, _ := r.(error)
	require.ErrorIs(t, err, ErrACLBootstrapped)
	var be *ACLBootstrappedError
	require.True(t, errors.As(err, &be))
	require.Equal(t, first, be.ResetIndex)
	require.Contains(t, err.Error(), "ACL bootstrap already done (reset index: ")
	require.Nil(t, h.snap().ACLTokenByAccessor("a2"), "a refused bootstrap stores nothing")

	r = h.apply(aclCmd(&messages.BootstrapACL{Token: mgmtToken("a2", "s2"), ResetIndex: first + 5}))
	require.ErrorIs(t, r.(error), ErrACLBootstrapped, "a wrong reset index is refused")

	require.Nil(t, h.apply(aclCmd(&messages.BootstrapACL{Token: mgmtToken("a2", "s2"), ResetIndex: first})))
	require.Equal(t, "a2", h.snap().ACLTokenBySecret("s2").AccessorID)
	require.Equal(t, h.index, h.snap().ACLBootstrapIndex())
}

func TestACLPoliciesAndTokens(t *testing.T) {
	h := newHarness(t)
	bad := h.apply(aclCmd(&messages.UpsertACLPolicies{Policies: []*messages.ACLPolicy{
		{Name: "ok", Rules: `node { policy = "read" }`}, {Name: "bad", Rules: `nod { policy = "read" }`}}}))
	require.ErrorIs(t, bad.(error), ErrBadACL)
	require.Contains(t, bad.(error).Error(), `"nod"`)
	require.Empty(t, h.snap().ACLPolicies(), "one bad policy stores none")

	require.Nil(t, h.apply(aclCmd(&messages.UpsertACLPolicies{Policies: []*messages.ACLPolicy{{Name: "ro", Rules: `node { policy = "read" }`}}})))
	created := h.index

	r := h.apply(aclCmd(&messages.UpsertACLTokens{Tokens: []*messages.ACLToken{{AccessorID: "c1", SecretHash: HashSecret("x"), Type: ACLTokenClient, Policies: []string{"nope"}}}}))
	require.ErrorIs(t, r.(error), ErrACLPolicyNotFound)
	r = h.apply(aclCmd(&messages.UpsertACLTokens{Tokens: []*messages.ACLToken{{AccessorID: "c1", SecretHash: HashSecret("x"), Type: "root"}}}))
	require.ErrorIs(t, r.(error), ErrBadACL)

	require.Nil(t, h.apply(aclCmd(&messages.UpsertACLTokens{Tokens: []*messages.ACLToken{{
		AccessorID: "c1", SecretHash: HashSecret("x"), Type: ACLTokenClient, Policies: []string{"ro"}, ExpirationTTL: 1000}}})))
	tok := h.snap().ACLTokenBySecret("x")
	require.Equal(t, testNow, tok.CreateTime)
	require.Equal(t, testNow+1000, tok.ExpirationTime)
	require.NotContains(t, string(mustMarshal(t, h.snap().ACLTokens()[0])), "x\x00")

	// An update keeps the secret and the expiry, and may rename.
	require.Nil(t, h.apply(aclCmd(&messages.UpsertACLTokens{Tokens: []*messages.ACLToken{{
		AccessorID: "c1", SecretHash: HashSecret("other"), Type: ACLTokenClient, Policies: []string{"ro"}, Name: "renamed"}}})))
	tok = h.snap().ACLTokenByAccessor("c1")
	require.Equal(t, "renamed", tok.Name)
	require.Equal(t, HashSecret("x"), tok.SecretHash)
	require.Equal(t, testNow+1000, tok.ExpirationTime)

	// Persist and restore keep policies, tokens and the bootstrap index.
	require.Nil(t, h.apply(aclCmd(&messages.BootstrapACL{Token: mgmtToken("m", "ms")})))
	restored := NewFSM(NewStore(), nil)
	require.NoError(t, restored.Restore(io.NopCloser(bytes.NewReader(persist(t, h.fsm).Bytes()))))
	rs := restored.Store().Snapshot()
	require.Equal(t, h.snap().ACLBootstrapIndex(), rs.ACLBootstrapIndex())
	require.True(t, proto.Equal(tok, rs.ACLTokenBySecret("x")))
	require.Equal(t, created, rs.ACLPolicyByName("ro").CreateIndex)

	// Expired tokens are collected at the command's time.
	r = h.apply(&messages.Command{Time: testNow + 999, Cmd: &messages.Command_ExpireACLTokens{ExpireACLTokens: &messages.ExpireACLTokens{}}})
	require.Equal(t, 0, r)
	r = h.apply(&messages.Command{Time: testNow + 1000, Cmd: &messages.Command_ExpireACLTokens{ExpireACLTokens: &messages.ExpireACLTokens{}}})
	require.Equal(t, 1, r)
	require.Nil(t, h.snap().ACLTokenByAccessor("c1"))
	require.NotNil(t, h.snap().ACLTokenByAccessor("m"))

	require.ErrorIs(t, h.apply(aclCmd(&messages.DeleteACLPolicies{Names: []string{"ro", "ghost"}})).(error), ErrACLPolicyNotFound)
	require.Nil(t, h.apply(aclCmd(&messages.DeleteACLPolicies{Names: []string{"ro"}})))
	require.ErrorIs(t, h.apply(aclCmd(&messages.DeleteACLTokens{AccessorIDs: []string{"c1"}})).(error), ErrACLTokenNotFound)
	require.Nil(t, h.apply(aclCmd(&messages.DeleteACLTokens{AccessorIDs: []string{"m"}})))
	require.Empty(t, h.snap().ACLTokens())
}
