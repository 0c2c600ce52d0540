package membership

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRegistryServersFollowChanges: the kept server list is the same as a
// fresh walk after every kind of change, and a caller's slice is its own.
func TestRegistryServersFollowChanges(t *testing.T) {
	now := time.Unix(1000, 0)
	r := newRegistry(func() time.Time { return now }, time.Hour)
	walk := func() []string {
		var out []string
		for _, m := range r.list(nil) {
			if m.Status == StatusAlive && m.IsServer() {
				out = append(out, m.Name)
			}
		}
		return out
	}
	names := func() []string {
		var out []string
		for _, m := range r.servers() {
			out = append(out, m.Name)
		}
		return out
	}
	join := func(name, role string) func() {
		return func() {
			_, err := r.alive(node(t, testMeta(name, role, "global")), EventJoin)
			require.NoError(t, err)
		}
	}
	leaving := func(name string) func() {
		return func() {
			n := node(t, testMeta(name, RoleServer, "global"))
			n.Meta, _ = encodeMeta(testMeta(name, RoleServer, "global"), true)
			_, err := r.alive(n, EventUpdate)
			require.NoError(t, err)
		}
	}
	steps := []struct {
		name   string
		change func()
		want   []string
	}{
		{"none", func() {}, nil},
		{"server s2 joins", join("s2", RoleServer), []string{"s2"}},
		{"a client joins", join("c1", RoleClient), []string{"s2"}},
		{"server s1 joins", join("s1", RoleServer), []string{"s1", "s2"}},
		{"s2 leaving", leaving("s2"), []string{"s1"}},
		{"s2 left", func() { r.gone("s2") }, []string{"s1"}},
		{"s1 fails", func() { r.gone("s1") }, nil},
		{"s1 back", join("s1", RoleServer), []string{"s1"}},
		{"c1 turns server", join("c1", RoleServer), []string{"c1", "s1"}},
		{"s2 reaped", func() { now = now.Add(2 * time.Hour) }, []string{"c1", "s1"}},
	}
	for _, st := range steps {
		st.change()
		require.Equal(t, st.want, names(), st.name)
		require.Equal(t, walk(), names(), st.name)
	}
	require.Len(t, r.list(nil), 2, "s2 was reaped")
	got := r.servers()
	got[0].Name = "scribbled"
	require.Equal(t, "c1", r.servers()[0].Name, "each caller gets its own slice")
}

// TestRegistryReapsOnlyWhenDue: gone members are forgotten after
// reapAfter, the earliest first, and not before.
func TestRegistryReapsOnlyWhenDue(t *testing.T) {
	now := time.Unix(1000, 0)
	r := newRegistry(func() time.Time { return now }, time.Hour)
	for _, n := range []string{"a", "b", "c"} {
		_, err := r.alive(node(t, testMeta(n, RoleClient, "global")), EventJoin)
		require.NoError(t, err)
	}
	r.gone("a")
	now = now.Add(30 * time.Minute)
	r.gone("b")
	now = now.Add(30 * time.Minute)
	require.Len(t, r.list(nil), 3, "a is due at exactly ReapAfter, not yet past it")
	now = now.Add(time.Second)
	require.Len(t, r.list(nil), 2, "a reaped")
	now = now.Add(29 * time.Minute)
	require.Len(t, r.list(nil), 2, "b not due yet")
	now = now.Add(time.Minute)
	require.Len(t, r.list(nil), 1, "b reaped")
	require.Equal(t, "c", r.list(nil)[0].Name)
}
