package state

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

func upsertNamespaces(nss ...*messages.Namespace) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_UpsertNamespaces{UpsertNamespaces: &messages.UpsertNamespaces{Namespaces: nss}}}
}

func deleteNamespaces(names ...string) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_DeleteNamespaces{DeleteNamespaces: &messages.DeleteNamespaces{Names: names}}}
}

func namespaceNames(nss []*messages.Namespace) []string {
	out := make([]string, 0, len(nss))
	for _, ns := range nss {
		out = append(out, ns.Name)
	}
	return out
}

func TestStoreStartsWithDefaultNamespace(t *testing.T) {
	snap := NewStore().Snapshot()
	require.Equal(t, []string{"default"}, namespaceNames(snap.Namespaces()))
	ns := snap.NamespaceByName("default")
	require.NotEmpty(t, ns.Description)
	require.Equal(t, uint64(1), ns.CreateIndex)
	require.Equal(t, "default", NamespaceOrDefault(""))
}

func TestUpsertNamespaces(t *testing.T) {
	long := strings.Repeat("x", maxNamespaceDescription+1)
	tests := []struct {
		name  string
		nss   []*messages.Namespace
		want  error
		texts []string
	}{
		{"none", nil, ErrInvalidNamespace, []string{"at least one"}},
		{"bad name", []*messages.Namespace{{Name: "a b"}}, ErrInvalidNamespace, []string{`"a b"`}},
		{"underscore", []*messages.Namespace{{Name: "a_b"}}, ErrInvalidNamespace, []string{`"a_b"`}},
		{"long description", []*messages.Namespace{{Name: "ok"}, {Name: "dev", Description: long}}, ErrInvalidNamespace, []string{`"dev"`, "description"}},
		{"empty (a null one through raft)", []*messages.Namespace{nil}, ErrInvalidNamespace, []string{`""`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			before := h.snap()
			err, _ := h.apply(upsertNamespaces(tt.nss...)).(error)
			require.ErrorIs(t, err, tt.want)
			for _, text := range tt.texts {
				require.ErrorContains(t, err, text)
			}
			require.Equal(t, msgs(before.Namespaces()), msgs(h.snap().Namespaces()), "one bad namespace stores none")
			require.Equal(t, before.Index(), h.snap().Index())
		})
	}
	t.Run("create then update keeps CreateIndex", func(t *testing.T) {
		h := newHarness(t)
		require.Nil(t, h.apply(upsertNamespaces(&messages.Namespace{Name: "prod", Description: "p", Meta: map[string]string{"team": "a"}})))
		created := h.index
		require.Nil(t, h.apply(upsertNamespaces(&messages.Namespace{Name: "prod", Description: "q"})))
		ns := h.snap().NamespaceByName("prod")
		require.Equal(t, "q", ns.Description)
		require.Equal(t, created, ns.CreateIndex)
		require.Equal(t, h.index, ns.ModifyIndex)
		require.Equal(t, h.index, h.snap().Index(TableNamespaces))
		require.Equal(t, []string{"default", "prod"}, namespaceNames(h.snap().Namespaces()))
	})
	t.Run("default's description may change", func(t *testing.T) {
		h := newHarness(t)
		require.Nil(t, h.apply(upsertNamespaces(&messages.Namespace{Name: "default", Description: "ours"})))
		ns := h.snap().NamespaceByName("default")
		require.Equal(t, "ours", ns.Description)
		require.Equal(t, uint64(1), ns.CreateIndex)
	})
}

// namespacesInUse is a harness with namespaces "prod" (a running job),
// "data" (a volume), "old" (a dead job) and "empty".
func namespacesInUse(t *testing.T) *harness {
	h := newHarness(t)
	require.Nil(t, h.apply(upsertNamespaces(&messages.Namespace{Name: "prod"}, &messages.Namespace{Name: "data"},
		&messages.Namespace{Name: "old"}, &messages.Namespace{Name: "empty"})))
	j := testJob("web", 100, 100)
	j.Namespace = "prod"
	require.IsType(t, &RegisterJobResult{}, h.apply(registerJob(j, nil)))
	dead := testJob("gone", 100, 100)
	dead.Namespace = "old"
	require.IsType(t, &RegisterJobResult{}, h.apply(registerJob(dead, nil)))
	require.IsType(t, &DeregisterJobResult{}, h.apply(&messages.Command{Cmd: &messages.Command_DeregisterJob{DeregisterJob: &messages.DeregisterJob{Namespace: "old", JobID: "gone"}}}))
	require.Equal(t, messages.JobStatusDead, h.snap().JobByID("old", "gone").Status)
	v := testVolume("vol1", false)
	v.Namespace = "data"
	require.Nil(t, h.apply(registerVolume(v)))
	return h
}

func TestDeleteNamespaces(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		want  error
		texts []string
	}{
		{"none", nil, ErrInvalidNamespace, []string{"at least one"}},
		{"default", []string{"default"}, ErrNamespaceBuiltIn, []string{`"default"`}},
		{"unknown", []string{"nope"}, ErrNamespaceNotFound, []string{`"nope"`}},
		{"running job", []string{"prod"}, ErrNamespaceInUse, []string{`"prod"`, "web"}},
		{"volume", []string{"data"}, ErrNamespaceInUse, []string{`"data"`, "vol1"}},
		{"all or none", []string{"empty", "prod"}, ErrNamespaceInUse, []string{`"prod"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := namespacesInUse(t)
			before := h.snap()
			err, _ := h.apply(deleteNamespaces(tt.names...)).(error)
			require.ErrorIs(t, err, tt.want)
			for _, text := range tt.texts {
				require.ErrorContains(t, err, text)
			}
			require.Equal(t, msgs(before.Namespaces()), msgs(h.snap().Namespaces()))
			require.Equal(t, before.Index(), h.snap().Index())
		})
	}
	t.Run("empty and dead-job namespaces go", func(t *testing.T) {
		h := namespacesInUse(t)
		require.Nil(t, h.apply(deleteNamespaces("empty", "old")))
		require.Equal(t, []string{"data", "default", "prod"}, namespaceNames(h.snap().Namespaces()))
		require.Equal(t, h.index, h.snap().Index(TableNamespaces))
	})
}

func TestJobsByNamespace(t *testing.T) {
	h := namespacesInUse(t)
	j := testJob("web", 100, 100) // default/web beside prod/web
	require.IsType(t, &RegisterJobResult{}, h.apply(registerJob(j, nil)))
	got := h.snap().JobsByNamespace("prod")
	require.Len(t, got, 1)
	require.Equal(t, "prod", got[0].Namespace)
	require.Empty(t, h.snap().JobsByNamespace("pro"), "a prefix of a name is not the namespace")
}

func TestNamespacesSnapshotRoundTrip(t *testing.T) {
	h := namespacesInUse(t)
	require.Nil(t, h.apply(upsertNamespaces(&messages.Namespace{Name: "default", Description: "changed"})))
	restored := NewFSM(NewStore(), nil)
	require.NoError(t, restored.Restore(io.NopCloser(bytes.NewReader(persist(t, h.fsm).Bytes()))))
	got := restored.Store().Snapshot()
	requireSameState(t, h.snap(), got)
	require.Equal(t, []string{"data", "default", "empty", "old", "prod"}, namespaceNames(got.Namespaces()))
	for _, ns := range h.snap().Namespaces() {
		require.True(t, proto.Equal(ns, got.NamespaceByName(ns.Name)), "namespace %s", ns.Name)
	}
	require.Equal(t, "changed", got.NamespaceByName("default").Description)
	require.Equal(t, h.snap().Index(TableNamespaces), got.Index(TableNamespaces))
	require.ErrorIs(t, CheckDeleteNamespaces(got, []string{"prod"}), ErrNamespaceInUse, "the restored job still holds its namespace")
}

func TestRestoreWithoutNamespacesKeepsDefault(t *testing.T) {
	h := newHarness(t)
	require.IsType(t, &RegisterJobResult{}, h.apply(registerJob(testJob("web", 1, 1), nil)))
	restored := NewFSM(NewStore(), nil)
	// This harness wrote a default namespace; an older snapshot has none,
	// and the fresh store's built-in one stays.
	require.NoError(t, restored.Restore(io.NopCloser(bytes.NewReader(persist(t, h.fsm).Bytes()))))
	require.Equal(t, []string{"default"}, namespaceNames(restored.Store().Snapshot().Namespaces()))
}
