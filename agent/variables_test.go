package agent

import (
	"io"
	"net/http"
	"strings"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestNomadClientVariables drives variables and the keyring with Nomad's
// own Go client: create, read, a check-and-set conflict (409 with the
// variable in the way), list by prefix without items, rotate the keyring
// and still read what the old key sealed, delete.
func TestNomadClientVariables(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	vars := c.Variables()

	created, _, err := vars.Create(&nomad.Variable{Path: "app/db", Items: nomad.VariableItems{"user": "admin", "pass": "s3cret"}}, nil)
	require.NoError(t, err)
	require.Equal(t, "default", created.Namespace)
	require.NotZero(t, created.ModifyIndex)

	got, _, err := vars.Read("app/db", nil)
	require.NoError(t, err)
	require.Equal(t, nomad.VariableItems{"user": "admin", "pass": "s3cret"}, got.Items)
	require.Equal(t, created.ModifyIndex, got.ModifyIndex)

	_, _, err = vars.Read("app/none", nil)
	require.ErrorIs(t, err, nomad.ErrVariablePathNotFound)
	peek, _, err := vars.Peek("app/none", nil)
	require.NoError(t, err)
	require.Nil(t, peek)

	// Check-and-set: a stale index conflicts, the current one writes.
	stale := got.Copy()
	stale.ModifyIndex = got.ModifyIndex - 1
	stale.Items["pass"] = "other"
	_, _, err = vars.CheckedUpdate(stale, nil)
	var conflict nomad.ErrCASConflict
	require.ErrorAs(t, err, &conflict)
	require.Equal(t, got.ModifyIndex, conflict.Conflict.ModifyIndex)
	require.Equal(t, "s3cret", conflict.Conflict.Items["pass"])
	_, _, err = vars.CheckedCreate(&nomad.Variable{Path: "app/db", Items: nomad.VariableItems{"a": "b"}}, nil)
	require.ErrorAs(t, err, &conflict, "create-only of an existing path")

	next := got.Copy()
	next.Items["pass"] = "rotated"
	updated, _, err := vars.CheckedUpdate(next, nil)
	require.NoError(t, err)
	require.Greater(t, updated.ModifyIndex, got.ModifyIndex)
	require.Equal(t, got.CreateIndex, updated.CreateIndex)

	// Listing: metadata by prefix, never the items.
	_, _, err = vars.Create(&nomad.Variable{Path: "app/cache", Items: nomad.VariableItems{"k": "v"}}, nil)
	require.NoError(t, err)
	_, _, err = vars.Create(&nomad.Variable{Path: "other", Items: nomad.VariableItems{"k": "v"}}, nil)
	require.NoError(t, err)
	list, _, err := vars.PrefixList("app/", nil)
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, []string{"app/cache", "app/db"}, []string{list[0].Path, list[1].Path})
	all, _, err := vars.List(nil)
	require.NoError(t, err)
	require.Len(t, all, 3)
	requireListHasNoItems(t, a.HTTPAddr())

	// Rotation: a new active key; what the old one sealed still opens.
	keys, _, err := c.Keyring().List(nil)
	require.NoError(t, err)
	require.Len(t, keys, 1, "the first write made the first key")
	key, _, err := c.Keyring().Rotate(nil, nil)
	require.NoError(t, err)
	require.Equal(t, nomad.RootKeyStateActive, key.State)
	require.NotEqual(t, keys[0].KeyID, key.KeyID)
	old, _, err := vars.Read("app/db", nil)
	require.NoError(t, err)
	require.Equal(t, "rotated", old.Items["pass"])
	_, _, err = vars.Create(&nomad.Variable{Path: "app/new", Items: nomad.VariableItems{"k": "v"}}, nil)
	require.NoError(t, err)
	keys, _, err = c.Keyring().List(nil)
	require.NoError(t, err)
	require.Len(t, keys, 2)

	// Deletes: a stale checked delete conflicts; a plain one removes it.
	_, err = vars.CheckedDelete("app/db", got.ModifyIndex, nil)
	require.ErrorAs(t, err, &conflict)
	_, err = vars.CheckedDelete("app/db", updated.ModifyIndex, nil)
	require.NoError(t, err)
	_, err = vars.Delete("app/cache", nil)
	require.NoError(t, err)
	_, _, err = vars.Read("app/db", nil)
	require.ErrorIs(t, err, nomad.ErrVariablePathNotFound)
}

// requireListHasNoItems checks the raw /v1/vars answer carries no items.
func requireListHasNoItems(t *testing.T, addr string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/v1/vars")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NotContains(t, string(body), "Items")
	require.NotContains(t, string(body), "s3cret")
}

// TestNomadClientVariablesRefused: Nomad's invalid paths, the 64 KiB
// bound and a namespace that does not exist are 400s.
func TestNomadClientVariablesRefused(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	tests := []struct {
		name  string
		v     *nomad.Variable
		words string
	}{
		{"bad path", &nomad.Variable{Path: "a.b", Items: nomad.VariableItems{"k": "v"}}, "invalid path"},
		{"reserved path", &nomad.Variable{Path: "nomad/other", Items: nomad.VariableItems{"k": "v"}}, "nomad/jobs"},
		{"no items", &nomad.Variable{Path: "a", Items: nomad.VariableItems{}}, "empty variables"},
		{"too large", &nomad.Variable{Path: "a", Items: nomad.VariableItems{"k": strings.Repeat("x", 64<<10)}}, "64KiB"},
		{"missing namespace", &nomad.Variable{Namespace: "nope", Path: "a", Items: nomad.VariableItems{"k": "v"}}, `namespace "nope" does not exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := c.Variables().Create(tt.v, &nomad.WriteOptions{Namespace: tt.v.Namespace})
			require.ErrorContains(t, err, "Unexpected response code: 400")
			require.ErrorContains(t, err, tt.words)
		})
	}
}
