package state

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPmapMatchesModel runs random inserts, updates and deletes over many
// transactions and checks every published version still holds exactly
// what it held when published (copy-on-write never leaks).
func TestPmapMatchesModel(t *testing.T) {
	tests := []struct {
		name     string
		key      func(r *rand.Rand) string
		dirSplit int
	}{
		{"random keys", func(r *rand.Rand) string { return fmt.Sprintf("%016x", r.Uint64()%5000) }, 0},
		{"shared prefixes", func(r *rand.Rand) string { return fmt.Sprintf("alloc-000000-%05d", r.IntN(5000)) }, 0},
		{"short keys", func(r *rand.Rand) string { return fmt.Sprint(r.IntN(300)) }, 0},
		// Directories of 4 chunks: splits, merges and empties of
		// directories happen all the time.
		{"random keys, small directories", func(r *rand.Rand) string { return fmt.Sprintf("%016x", r.Uint64()%5000) }, 4},
		{"shared prefixes, small directories", func(r *rand.Rand) string { return fmt.Sprintf("alloc-000000-%05d", r.IntN(5000)) }, 4},
		{"short keys, small directories", func(r *rand.Rand) string { return fmt.Sprint(r.IntN(300)) }, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			m := newPmap(0, kvKey)
			m.dirSplit = tt.dirSplit
			model := map[string]int{}
			type version struct {
				m     *pmap[kv]
				model map[string]int
			}
			var versions []version
			for gen := uint64(1); gen <= 60; gen++ {
				m = m.edit(gen)
				for range 400 {
					k := tt.key(r)
					if r.IntN(4) == 0 {
						m.Delete(k)
						delete(model, k)
						continue
					}
					v := r.Int()
					m.Set(kv{k, v})
					model[k] = v
				}
				versions = append(versions, version{m, maps.Clone(model)})
			}
			for i, v := range versions {
				requirePmapEqual(t, v.model, v.m, "version %d", i)
			}
		})
	}
}

// kv is a test value that carries its key.
type kv struct {
	k string
	v int
}

func kvKey(e kv) string { return e.k }

func requirePmapEqual(t *testing.T, model map[string]int, m *pmap[kv], msgAndArgs ...any) {
	t.Helper()
	require.Equal(t, len(model), m.Len(), msgAndArgs...)
	keys := slices.Sorted(maps.Keys(model))
	want := make([]kv, 0, len(keys))
	for _, k := range keys {
		want = append(want, kv{k, model[k]})
		got, ok := m.Get(k)
		require.True(t, ok, msgAndArgs...)
		require.Equal(t, kv{k, model[k]}, got, msgAndArgs...)
	}
	if len(want) == 0 {
		want = nil
	}
	require.Equal(t, want, m.Values(), msgAndArgs...)
	_, ok := m.Get("absent-key")
	require.False(t, ok)
	for _, d := range m.dirs {
		require.NotEmpty(t, d.chunks, msgAndArgs...)
		for ci, c := range d.chunks {
			require.NotEmpty(t, c.items, msgAndArgs...)
			require.Equal(t, c.items[0].pfx, d.firsts[ci], msgAndArgs...)
			for _, it := range c.items {
				require.Equal(t, keyPrefix(it.val.k), it.pfx, msgAndArgs...)
			}
		}
	}
	for di, d := range m.dirs {
		require.Equal(t, d.firsts[0], m.dfirst[di], msgAndArgs...)
	}
}

func TestNestedPmapDropsEmptyInner(t *testing.T) {
	outer := newPmap(1, innerName[kv])
	nestedSet(outer, "a", kv{"x", 1}, kvKey)
	nestedSet(outer, "a", kv{"y", 2}, kvKey)
	nestedSet(outer, "b", kv{"z", 3}, kvKey)
	published := outer
	outer = outer.edit(2)
	nestedDelete(outer, "a", "x")
	nestedDelete(outer, "b", "z")
	nestedDelete(outer, "missing", "z")
	require.Equal(t, []kv{{"y", 2}}, nestedValues(outer, "a"))
	require.Nil(t, nestedValues(outer, "b"))
	require.Equal(t, 1, outer.Len())
	require.Equal(t, []kv{{"x", 1}, {"y", 2}}, nestedValues(published, "a"), "published version unchanged")
	require.Equal(t, []kv{{"z", 3}}, nestedValues(published, "b"))
}

func TestKeyPrefixOrdersLikeKeys(t *testing.T) {
	keys := []string{"", "a", "a\x00", "ab", "abcdefgh", "abcdefghi", "abcdefgi", "b", "\xff\xff\xff\xff\xff\xff\xff\xff\xff"}
	for i := 1; i < len(keys); i++ {
		require.LessOrEqual(t, keyPrefix(keys[i-1]), keyPrefix(keys[i]), "%q < %q", keys[i-1], keys[i])
	}
}

// TestNestedInnerMapsSplitSmall: inner maps of the nested indexes split
// at innerChunk, so a write copies at most that many of their entries.
func TestNestedInnerMapsSplitSmall(t *testing.T) {
	outer := newPmap(1, innerName[kv])
	for i := range 100 {
		nestedSet(outer, "node", kv{fmt.Sprintf("k%03d", i), i}, kvKey)
	}
	inner, _ := outer.Get("node")
	require.Equal(t, 100, inner.Len())
	for _, d := range inner.dirs {
		for _, c := range d.chunks {
			require.LessOrEqual(t, len(c.items), innerChunk)
		}
	}
	require.Equal(t, 42, nestedValues(outer, "node")[42].v)
	edited := inner.edit(2)
	require.Equal(t, innerChunk, edited.split, "a new version keeps the split")
}
