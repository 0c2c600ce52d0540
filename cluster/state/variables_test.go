package state

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/keyring"
	"github.com/troupe-dev/troupe/messages"
)

func rotate(k *messages.RootKey) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_RotateKeyring{RotateKeyring: &messages.RotateKeyring{Key: k}}}
}

func varSet(v *messages.Variable, check bool, cas uint64) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_VarApply{VarApply: &messages.VarApply{
		Op: messages.VarOp_VAR_OP_SET, Var: v, CheckIndex: check, CAS: cas}}}
}

func varDelete(ns, path string, check bool, cas uint64) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_VarApply{VarApply: &messages.VarApply{
		Op: messages.VarOp_VAR_OP_DELETE, Var: &messages.Variable{Namespace: ns, Path: path}, CheckIndex: check, CAS: cas}}}
}

// keyedHarness is a harness whose keyring holds one active key.
func keyedHarness(t *testing.T) (*harness, *messages.RootKey) {
	h := newHarness(t)
	k, err := keyring.NewRootKey(time.Unix(0, testNow))
	require.NoError(t, err)
	res := h.apply(rotate(k))
	require.IsType(t, &messages.RootKey{}, res)
	return h, k
}

func sealed(t *testing.T, k *messages.RootKey, ns, path string, items map[string]string) *messages.Variable {
	d, err := keyring.Seal(k, ns, path, items)
	require.NoError(t, err)
	return &messages.Variable{Namespace: ns, Path: path, Data: d}
}

func TestVariableCheckAndSet(t *testing.T) {
	h, k := keyedHarness(t)
	v := sealed(t, k, "default", "app/db", map[string]string{"a": "1"})

	res := h.apply(varSet(v, true, 0)) // create only
	stored, ok := res.(*messages.Variable)
	require.True(t, ok, "%v", res)
	require.Equal(t, h.index, stored.CreateIndex)
	created := stored.ModifyIndex

	before := h.snap()
	res = h.apply(varSet(sealed(t, k, "default", "app/db", map[string]string{"a": "2"}), true, 0))
	var casErr *VariableCASError
	require.ErrorAs(t, res.(error), &casErr)
	require.ErrorIs(t, casErr, ErrVariableCASConflict)
	require.Equal(t, created, casErr.Current.ModifyIndex)
	require.Equal(t, before.Index(TableVariables), h.snap().Index(TableVariables))

	res = h.apply(varSet(sealed(t, k, "default", "app/db", map[string]string{"a": "2"}), true, created))
	updated := res.(*messages.Variable)
	require.Equal(t, created, updated.CreateIndex)
	require.Equal(t, h.index, updated.ModifyIndex)

	require.ErrorIs(t, h.apply(varDelete("default", "app/db", true, created)).(error), ErrVariableCASConflict)
	require.Nil(t, h.apply(varDelete("default", "app/db", true, updated.ModifyIndex)))
	require.Nil(t, h.snap().Variable("default", "app/db"))
	require.Nil(t, h.apply(varDelete("default", "app/db", false, 0)), "deleting a missing variable is a no-op")
}

func TestVariableRefused(t *testing.T) {
	h, k := keyedHarness(t)
	good := func() *messages.Variable { return sealed(t, k, "default", "a", map[string]string{"k": "v"}) }
	unknownKey := good()
	unknownKey.Data.KeyID = "nope"
	unsealed := &messages.Variable{Namespace: "default", Path: "a"}
	tooBig := good()
	tooBig.Data.Ciphertext = make([]byte, maxSealedSize+1)
	badPath := sealed(t, k, "default", "a b", map[string]string{"k": "v"})
	noNS := sealed(t, k, "", "a", map[string]string{"k": "v"})
	tests := []struct {
		name string
		cmd  *messages.Command
		want error
	}{
		{"unknown key", varSet(unknownKey, false, 0), ErrInvalidVariable},
		{"not sealed", varSet(unsealed, false, 0), ErrInvalidVariable},
		{"too big", varSet(tooBig, false, 0), ErrVariableTooLarge},
		{"bad path", varSet(badPath, false, 0), ErrInvalidVariable},
		{"no namespace", varSet(noNS, false, 0), ErrInvalidVariable},
		{"duplicate key", rotate(k), ErrInvalidRootKey},
		{"short key", rotate(&messages.RootKey{KeyID: "x", Key: []byte("short")}), ErrInvalidRootKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := h.snap()
			res := h.apply(tt.cmd)
			require.ErrorIs(t, res.(error), tt.want)
			require.Equal(t, before.Index(), h.snap().Index())
		})
	}
}

func TestValidateVariable(t *testing.T) {
	items := map[string]string{"k": "v"}
	tests := []struct {
		name, ns, path string
		items          map[string]string
		want           error
	}{
		{"ok", "default", "app/db", items, nil},
		{"nomad/jobs below", "default", "nomad/jobs/web/task", items, nil},
		{"job template", "default", "nomad/job-templates/t", items, nil},
		{"nomad alone", "default", "nomad", items, ErrInvalidVariable},
		{"nomad other", "default", "nomad/other", items, ErrInvalidVariable},
		{"deep job template", "default", "nomad/job-templates/t/x", items, ErrInvalidVariable},
		{"bad char", "default", "a.b", items, ErrInvalidVariable},
		{"too long path", "default", strings.Repeat("a", 129), items, ErrInvalidVariable},
		{"empty path", "default", "", items, ErrInvalidVariable},
		{"wildcard namespace", "*", "a", items, ErrInvalidVariable},
		{"no items", "default", "a", nil, ErrInvalidVariable},
		{"at the limit", "default", "a", map[string]string{"k": strings.Repeat("x", MaxVariableSize-1)}, nil},
		{"over the limit", "default", "a", map[string]string{"k": strings.Repeat("x", MaxVariableSize)}, ErrVariableTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateVariable(tt.ns, tt.path, tt.items)
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.want)
		})
	}
}

func TestRotateKeyringKeepsOldKeys(t *testing.T) {
	h, k1 := keyedHarness(t)
	require.IsType(t, &messages.Variable{}, h.apply(varSet(sealed(t, k1, "default", "old", map[string]string{"v": "1"}), false, 0)))
	k2, err := keyring.NewRootKey(time.Unix(0, testNow))
	require.NoError(t, err)
	h.apply(rotate(k2))
	keys := h.snap().RootKeys()
	require.Len(t, keys, 2)
	require.Equal(t, k2.KeyID, keyring.Active(keys).KeyID)
	old := h.snap().Variable("default", "old")
	items, err := keyring.Open(keys, "default", "old", old.Data)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"v": "1"}, items)
}

func TestVariablesByPrefix(t *testing.T) {
	h, k := keyedHarness(t)
	require.Nil(t, h.apply(upsertNamespaces(&messages.Namespace{Name: "prod"})))
	for _, p := range []struct{ ns, path string }{{"default", "app/b"}, {"default", "app/a"}, {"default", "other"}, {"prod", "app/c"}} {
		h.apply(varSet(sealed(t, k, p.ns, p.path, map[string]string{"k": "v"}), false, 0))
	}
	paths := func(vs []*messages.Variable) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.Namespace+"/"+v.Path)
		}
		return out
	}
	require.Equal(t, []string{"default/app/a", "default/app/b"}, paths(h.snap().VariablesByPrefix("default", "app/")))
	require.Equal(t, []string{"default/app/a", "default/app/b", "prod/app/c"}, paths(h.snap().VariablesByPrefix(AllNamespaces, "app")))
	require.Empty(t, h.snap().VariablesByPrefix("none", ""))
}

func TestVariableSnapshotHoldsCiphertextOnly(t *testing.T) {
	h, k := keyedHarness(t)
	const secret = "correct-horse-battery-staple"
	h.apply(varSet(sealed(t, k, "default", "app/db", map[string]string{"password": secret}), false, 0))
	sink := persist(t, h.fsm)
	require.False(t, bytes.Contains(sink.Bytes(), []byte(secret)), "the snapshot holds the plaintext")
	require.False(t, bytes.Contains(sink.Bytes(), []byte("password")), "the snapshot holds an item's key")

	restored := NewFSM(NewStore(), nil)
	require.NoError(t, restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
	snap := restored.Store().Snapshot()
	v := snap.Variable("default", "app/db")
	require.NotNil(t, v)
	require.Equal(t, h.snap().Index(TableVariables), snap.Index(TableVariables))
	items, err := keyring.Open(snap.RootKeys(), "default", "app/db", v.Data)
	require.NoError(t, err)
	require.Equal(t, secret, items["password"])
}
