package state

import (
	"math"
	"slices"
	"sort"
	"strings"
)

// pmap is a persistent sorted map from string keys to values that carry
// their own key (keyOf): a sorted list of sorted chunks. A published pmap is immutable; a write
// transaction (identified by a generation number) edits copies, copying the
// chunk list once and each chunk it touches once, so a batch of k inserts
// costs O(k log n) comparisons plus O(k) chunk copies, and readers holding
// the old version are never disturbed.
//
// The allocations table uses it instead of go-memdb: with a million
// allocations memdb's radix trees cost ~40µs and ~3KB per allocation
// (four indexes, a channel per node), this ~2µs and ~70 bytes. An item
// holds no key of its own (the value has it): one pointer an item for the
// garbage collector to mark and the write barrier to copy, not two.
type pmap[V any] struct {
	gen    uint64
	chunks []*pchunk[V]
	firsts []uint64 // firsts[i] = keyPrefix(chunks[i]'s first key): a cache-friendly search
	n      int
	// split is the size at which a chunk splits in two (0: maxChunk).
	split int
	keyOf func(V) string
	// name is the key of an inner map in its outer one (nestedSet).
	name string
}

type pchunk[V any] struct {
	gen   uint64
	items []pitem[V]
}

// pitem's pfx is keyPrefix of its value's key: a search compares
// prefixes, which sit in the chunk's own memory, and reads a key (through
// the value) only to break a tie; keys are mostly UUIDs, whose first 8
// bytes differ.
type pitem[V any] struct {
	pfx uint64
	val V
}

// maxChunk is the size at which a chunk splits in two. A write copies
// each chunk it touches once, so the inner maps of the nested indexes
// (by node, job and evaluation), each written a few keys per transaction,
// split at innerChunk: a placement on a node with a hundred allocations
// copies 16 of them, not 64.
const (
	maxChunk   = 64
	innerChunk = 16
)

func newPmap[V any](gen uint64, keyOf func(V) string) *pmap[V] {
	return &pmap[V]{gen: gen, keyOf: keyOf}
}

// innerName is the key of an inner map: its name.
func innerName[V any](m *pmap[V]) string { return m.name }

func (m *pmap[V]) splitAt() int {
	if m.split > 0 {
		return m.split
	}
	return maxChunk
}

// Len is the number of keys.
func (m *pmap[V]) Len() int {
	if m == nil {
		return 0
	}
	return m.n
}

// edit returns a version of m that transaction gen may change: m itself
// when gen already owns it, else a copy sharing its chunks.
func (m *pmap[V]) edit(gen uint64) *pmap[V] {
	if m.gen == gen {
		return m
	}
	return &pmap[V]{gen: gen, chunks: slices.Clone(m.chunks), firsts: slices.Clone(m.firsts), n: m.n,
		split: m.split, keyOf: m.keyOf, name: m.name}
}

// keyPrefix is the first 8 bytes of key, big-endian, zero-padded: it
// orders like the key itself except that equal prefixes need a full
// comparison.
func keyPrefix(key string) uint64 {
	var p uint64
	for i := range 8 {
		p <<= 8
		if i < len(key) {
			p |= uint64(key[i])
		}
	}
	return p
}

// chunkFor is the index of the chunk where key is or would go.
func (m *pmap[V]) chunkFor(key string) int {
	p := keyPrefix(key)
	// lo..hi: the chunks whose first key has the same prefix as key.
	lo, _ := slices.BinarySearch(m.firsts, p)
	hi := len(m.firsts)
	if p < math.MaxUint64 {
		hi, _ = slices.BinarySearch(m.firsts[lo:], p+1)
		hi += lo
	}
	// i: the first chunk whose first key is >= key.
	i := lo + sort.Search(hi-lo, func(j int) bool { return m.keyOf(m.chunks[lo+j].items[0].val) >= key })
	if i < len(m.chunks) && m.keyOf(m.chunks[i].items[0].val) == key {
		return i
	}
	return max(i-1, 0)
}

func (c *pchunk[V]) find(key string, keyOf func(V) string) (int, bool) {
	p := keyPrefix(key)
	return slices.BinarySearchFunc(c.items, key, func(it pitem[V], k string) int {
		switch {
		case it.pfx < p:
			return -1
		case it.pfx > p:
			return 1
		}
		return strings.Compare(keyOf(it.val), k)
	})
}

// Get returns the value for key.
func (m *pmap[V]) Get(key string) (V, bool) {
	var zero V
	if m == nil || len(m.chunks) == 0 {
		return zero, false
	}
	c := m.chunks[m.chunkFor(key)]
	if i, ok := c.find(key, m.keyOf); ok {
		return c.items[i].val, true
	}
	return zero, false
}

// ownChunk returns chunk i writable by m's transaction.
func (m *pmap[V]) ownChunk(i int) *pchunk[V] {
	c := m.chunks[i]
	if c.gen != m.gen {
		items := make([]pitem[V], len(c.items), len(c.items)+4) // room for a few inserts
		copy(items, c.items)
		c = &pchunk[V]{gen: m.gen, items: items}
		m.chunks[i] = c
	}
	return c
}

// Set stores val under its key. m must be owned by the caller's
// transaction.
func (m *pmap[V]) Set(val V) {
	key := m.keyOf(val)
	p := keyPrefix(key)
	if len(m.chunks) == 0 {
		m.chunks = []*pchunk[V]{{gen: m.gen, items: []pitem[V]{{p, val}}}}
		m.firsts = []uint64{p}
		m.n = 1
		return
	}
	ci := m.chunkFor(key)
	c := m.ownChunk(ci)
	i, found := c.find(key, m.keyOf)
	if found {
		c.items[i].val = val
		return
	}
	c.items = slices.Insert(c.items, i, pitem[V]{p, val})
	m.n++
	if i == 0 {
		m.firsts[ci] = p
	}
	if len(c.items) > m.splitAt() {
		half := len(c.items) / 2
		right := &pchunk[V]{gen: m.gen, items: slices.Clone(c.items[half:])}
		c.items = slices.Clip(c.items[:half])
		m.chunks = slices.Insert(m.chunks, ci+1, right)
		m.firsts = slices.Insert(m.firsts, ci+1, right.items[0].pfx)
	}
}

// Delete removes key. m must be owned by the caller's transaction.
func (m *pmap[V]) Delete(key string) {
	if len(m.chunks) == 0 {
		return
	}
	ci := m.chunkFor(key)
	i, found := m.chunks[ci].find(key, m.keyOf)
	if !found {
		return
	}
	c := m.ownChunk(ci)
	c.items = slices.Delete(c.items, i, i+1)
	m.n--
	switch {
	case len(c.items) == 0:
		m.chunks = slices.Delete(m.chunks, ci, ci+1)
		m.firsts = slices.Delete(m.firsts, ci, ci+1)
	case i == 0:
		m.firsts[ci] = c.items[0].pfx
	}
}

// Values returns every value in key order.
func (m *pmap[V]) Values() []V {
	if m.Len() == 0 {
		return nil
	}
	out := make([]V, 0, m.n)
	for _, c := range m.chunks {
		for _, it := range c.items {
			out = append(out, it.val)
		}
	}
	return out
}

// nestedSet stores v in the inner map at okey (created when missing, with
// keyOf for its values). outer must be owned by the caller's transaction.
func nestedSet[V any](outer *pmap[*pmap[V]], okey string, v V, keyOf func(V) string) {
	var c nestedCursor[V]
	c.set(outer, okey, v, keyOf)
}

// nestedCursor is nestedSet that remembers the inner map it last wrote,
// owned by the outer map's generation, so that writes in a row to one
// inner map skip the outer lookup. Reset it (to its zero value) whenever
// its outer map loses a key.
type nestedCursor[V any] struct {
	outer *pmap[*pmap[V]]
	key   string
	inner *pmap[V]
}

func (c *nestedCursor[V]) set(outer *pmap[*pmap[V]], okey string, v V, keyOf func(V) string) {
	if c.inner != nil && c.outer == outer && c.key == okey && c.inner.gen == outer.gen {
		c.inner.Set(v)
		return
	}
	inner, _ := outer.Get(okey)
	var owned *pmap[V]
	if inner == nil {
		owned = &pmap[V]{gen: outer.gen, split: innerChunk, keyOf: keyOf, name: okey}
	} else {
		owned = inner.edit(outer.gen)
	}
	owned.Set(v)
	if owned != inner {
		outer.Set(owned)
	}
	c.outer, c.key, c.inner = outer, okey, owned
}

// nestedDelete removes ikey from the inner map at okey, dropping the inner
// map when it empties. outer must be owned by the caller's transaction.
func nestedDelete[V any](outer *pmap[*pmap[V]], okey, ikey string) {
	inner, ok := outer.Get(okey)
	if !ok {
		return
	}
	owned := inner.edit(outer.gen)
	owned.Delete(ikey)
	switch {
	case owned.Len() == 0:
		outer.Delete(okey)
	case owned != inner:
		outer.Set(owned)
	}
}

// nestedValues returns the inner map's values at okey, in key order.
func nestedValues[V any](outer *pmap[*pmap[V]], okey string) []V {
	inner, _ := outer.Get(okey)
	return inner.Values()
}

// Range calls fn for each value in key order until fn returns false.
func (m *pmap[V]) Range(fn func(V) bool) {
	if m == nil {
		return
	}
	for _, c := range m.chunks {
		for _, it := range c.items {
			if !fn(it.val) {
				return
			}
		}
	}
}
