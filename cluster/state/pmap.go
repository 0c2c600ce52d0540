package state

import (
	"math"
	"slices"
	"sort"
	"strings"
)

// pmap is a persistent sorted map from string keys to values that carry
// their own key (keyOf): a sorted list of directories, each a sorted list
// of sorted chunks. A published pmap is immutable; a write transaction
// (identified by a generation number) edits copies, copying the directory
// list once and each directory and chunk it touches once, so a batch of k
// inserts costs O(k log n) comparisons plus O(k) chunk copies, and readers
// holding the old version are never disturbed.
//
// The allocations table uses it instead of go-memdb: with a million
// allocations memdb's radix trees cost ~40µs and ~3KB per allocation
// (four indexes, a channel per node), this ~2µs and ~70 bytes. An item
// holds no key of its own (the value has it): one pointer an item for the
// garbage collector to mark and the write barrier to copy, not two.
//
// The directories keep the cost of a chunk split flat: with one list of
// chunks, a split inserted into a list of n/48 chunk pointers (20,000 at a
// million allocations, copied with a write barrier each) and every
// transaction cloned that list, a cost that grew with the table.
type pmap[V any] struct {
	gen    uint64
	dirs   []*pdir[V]
	dfirst []uint64 // dfirst[i] = keyPrefix(dirs[i]'s first key)
	n      int
	// split is the size at which a chunk splits in two (0: maxChunk);
	// dirSplit the number of chunks at which a directory does (0: maxDir).
	split, dirSplit int
	keyOf           func(V) string
	// name is the key of an inner map in its outer one (nestedSet).
	name string
	// dir1 and dfirst1 back dirs and dfirst while the map has one
	// directory (setOneDir): an inner map (one per node, job and
	// evaluation) is copied for each placement, and two slices of one
	// element were two more allocations each time.
	dir1    [1]*pdir[V]
	dfirst1 [1]uint64
}

// setOneDir makes d the map's only directory, held in the map itself.
func (m *pmap[V]) setOneDir(d *pdir[V], first uint64) {
	m.dir1[0], m.dfirst1[0] = d, first
	m.dirs, m.dfirst = m.dir1[:1:1], m.dfirst1[:1:1]
}

// pdir is a run of chunks: firsts[i] = keyPrefix(chunks[i]'s first key),
// a cache-friendly search.
type pdir[V any] struct {
	gen    uint64
	chunks []*pchunk[V]
	firsts []uint64
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
// copies 16 of them, not 64. maxDir is the number of chunks at which a
// directory splits.
//
// The allocations by ID split at idChunk and idDir: a plan's thousand
// placements have random IDs, so each copies a chunk of its own (half as
// big a chunk, half the bytes), and with directories of 128 chunks a plan
// copied every directory: a cost per plan that grew with the table (at a
// million allocations as much as the chunks). Directories of 16 chunks
// bound it by the placements. BenchmarkApplyPlan1000: 3.98 -> 3.70 MB
// allocated per plan at 100,000 allocations, 6.56 -> 6.01 MB at a million.
const (
	maxChunk   = 64
	innerChunk = 16
	maxDir     = 128
	idChunk    = 32
	idDir      = 16
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

func (m *pmap[V]) dirSplitAt() int {
	if m.dirSplit > 0 {
		return m.dirSplit
	}
	return maxDir
}

// Len is the number of keys.
func (m *pmap[V]) Len() int {
	if m == nil {
		return 0
	}
	return m.n
}

// edit returns a version of m that transaction gen may change: m itself
// when gen already owns it, else a copy sharing its directories.
func (m *pmap[V]) edit(gen uint64) *pmap[V] {
	if m.gen == gen {
		return m
	}
	c := &pmap[V]{gen: gen, n: m.n, split: m.split, dirSplit: m.dirSplit, keyOf: m.keyOf, name: m.name}
	if len(m.dirs) == 1 {
		c.setOneDir(m.dirs[0], m.dfirst[0])
	} else {
		c.dirs, c.dfirst = slices.Clone(m.dirs), slices.Clone(m.dfirst)
	}
	return c
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

// search is the index of the run (a chunk or a directory) where key is or
// would go, among runs sorted by first key, whose first keys' prefixes
// are firsts and whose first keys are firstKey(i).
func search(firsts []uint64, firstKey func(int) string, key string) int {
	p := keyPrefix(key)
	// lo..hi: the runs whose first key has the same prefix as key.
	lo, _ := slices.BinarySearch(firsts, p)
	if lo == len(firsts) || firsts[lo] != p {
		// No run's first key shares key's prefix (the common case): key
		// goes in the run before lo, and no first key is read (each one
		// read is a value's key: two or three cache misses).
		return max(lo-1, 0)
	}
	hi := len(firsts)
	if p < math.MaxUint64 {
		hi, _ = slices.BinarySearch(firsts[lo:], p+1)
		hi += lo
	}
	// i: the first run whose first key is >= key.
	i := lo + sort.Search(hi-lo, func(j int) bool { return firstKey(lo+j) >= key })
	if i < len(firsts) && firstKey(i) == key {
		return i
	}
	return max(i-1, 0)
}

// dirFor is the index of the directory where key is or would go.
func (m *pmap[V]) dirFor(key string) int {
	if len(m.dirs) == 1 {
		return 0
	}
	return search(m.dfirst, func(i int) string { return m.keyOf(m.dirs[i].chunks[0].items[0].val) }, key)
}

// chunkFor is the index in d of the chunk where key is or would go.
func (d *pdir[V]) chunkFor(key string, keyOf func(V) string) int {
	return search(d.firsts, func(i int) string { return keyOf(d.chunks[i].items[0].val) }, key)
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
	if m == nil || len(m.dirs) == 0 {
		return zero, false
	}
	d := m.dirs[m.dirFor(key)]
	c := d.chunks[d.chunkFor(key, m.keyOf)]
	if i, ok := c.find(key, m.keyOf); ok {
		return c.items[i].val, true
	}
	return zero, false
}

// ownDir returns directory i writable by m's transaction.
func (m *pmap[V]) ownDir(i int) *pdir[V] {
	d := m.dirs[i]
	if d.gen != m.gen {
		d = &pdir[V]{gen: m.gen, chunks: slices.Clone(d.chunks), firsts: slices.Clone(d.firsts)}
		m.dirs[i] = d
	}
	return d
}

// ownChunk returns chunk i of d (owned) writable by m's transaction.
func (m *pmap[V]) ownChunk(d *pdir[V], i int) *pchunk[V] {
	c := d.chunks[i]
	if c.gen != m.gen {
		items := make([]pitem[V], len(c.items), len(c.items)+4) // room for a few inserts
		copy(items, c.items)
		c = &pchunk[V]{gen: m.gen, items: items}
		d.chunks[i] = c
	}
	return c
}

// Set stores val under its key. m must be owned by the caller's
// transaction.
func (m *pmap[V]) Set(val V) {
	key := m.keyOf(val)
	p := keyPrefix(key)
	if len(m.dirs) == 0 {
		c := &pchunk[V]{gen: m.gen, items: []pitem[V]{{p, val}}}
		m.setOneDir(&pdir[V]{gen: m.gen, chunks: []*pchunk[V]{c}, firsts: []uint64{p}}, p)
		m.n = 1
		return
	}
	di := m.dirFor(key)
	d := m.ownDir(di)
	ci := d.chunkFor(key, m.keyOf)
	c := m.ownChunk(d, ci)
	i, found := c.find(key, m.keyOf)
	if found {
		c.items[i].val = val
		return
	}
	c.items = slices.Insert(c.items, i, pitem[V]{p, val})
	m.n++
	if i == 0 {
		d.firsts[ci] = p
		if ci == 0 {
			m.dfirst[di] = p
		}
	}
	if len(c.items) > m.splitAt() {
		half := len(c.items) / 2
		right := &pchunk[V]{gen: m.gen, items: slices.Clone(c.items[half:])}
		c.items = slices.Clip(c.items[:half])
		d.chunks = slices.Insert(d.chunks, ci+1, right)
		d.firsts = slices.Insert(d.firsts, ci+1, right.items[0].pfx)
	}
	if len(d.chunks) > m.dirSplitAt() {
		half := len(d.chunks) / 2
		right := &pdir[V]{gen: m.gen, chunks: slices.Clone(d.chunks[half:]), firsts: slices.Clone(d.firsts[half:])}
		d.chunks, d.firsts = slices.Clip(d.chunks[:half]), slices.Clip(d.firsts[:half])
		m.dirs = slices.Insert(m.dirs, di+1, right)
		m.dfirst = slices.Insert(m.dfirst, di+1, right.firsts[0])
	}
}

// Delete removes key. m must be owned by the caller's transaction.
func (m *pmap[V]) Delete(key string) {
	if len(m.dirs) == 0 {
		return
	}
	di := m.dirFor(key)
	ci := m.dirs[di].chunkFor(key, m.keyOf)
	i, found := m.dirs[di].chunks[ci].find(key, m.keyOf)
	if !found {
		return
	}
	d := m.ownDir(di)
	c := m.ownChunk(d, ci)
	c.items = slices.Delete(c.items, i, i+1)
	m.n--
	switch {
	case len(c.items) == 0:
		d.chunks = slices.Delete(d.chunks, ci, ci+1)
		d.firsts = slices.Delete(d.firsts, ci, ci+1)
	case i == 0:
		d.firsts[ci] = c.items[0].pfx
	}
	switch {
	case len(d.chunks) == 0:
		m.dirs = slices.Delete(m.dirs, di, di+1)
		m.dfirst = slices.Delete(m.dfirst, di, di+1)
	case ci == 0:
		m.dfirst[di] = d.firsts[0]
	}
}

// Values returns every value in key order.
func (m *pmap[V]) Values() []V {
	if m.Len() == 0 {
		return nil
	}
	out := make([]V, 0, m.n)
	m.Range(func(v V) bool {
		out = append(out, v)
		return true
	})
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
	for _, d := range m.dirs {
		for _, c := range d.chunks {
			for _, it := range c.items {
				if !fn(it.val) {
					return
				}
			}
		}
	}
}
