package httpapi

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// nextTokenHeader names the first item of the next page; it is absent on
// the last page.
const nextTokenHeader = "X-Nomad-NextToken"

// pageKey places an item in its list's paging order, and names it in a
// next token: by create index, then by name ("<index>.<name>"), for the
// lists Nomad sorts by create index; by name alone for the others.
type pageKey struct {
	index uint64
	name  string
}

func (k pageKey) compare(o pageKey) int {
	if c := cmp.Compare(k.index, o.index); c != 0 {
		return c
	}
	return strings.Compare(k.name, o.name)
}

// order is the paging order of a list.
type order[T any] struct {
	key     func(T) pageKey
	indexed bool // keys have a create index: tokens are "<index>.<name>"
}

// byName orders a list by a name (an ID, or "<namespace>.<ID>").
func byName[T any](name func(T) string) order[T] {
	return order[T]{key: func(it T) pageKey { return pageKey{name: name(it)} }}
}

// byCreateIndex orders a list by create index, then ID, as Nomad orders
// allocations and evaluations.
func byCreateIndex[T any](index func(T) uint64, id func(T) string) order[T] {
	return order[T]{indexed: true, key: func(it T) pageKey { return pageKey{index: index(it), name: id(it)} }}
}

func (o order[T]) token(k pageKey) string {
	if o.indexed {
		return strconv.FormatUint(k.index, 10) + "." + k.name
	}
	return k.name
}

func (o order[T]) parseToken(tok string) (pageKey, error) {
	if !o.indexed {
		return pageKey{name: tok}, nil
	}
	idx, name, _ := strings.Cut(tok, ".")
	n, err := strconv.ParseUint(idx, 10, 64)
	if err != nil {
		return pageKey{}, codeErr(http.StatusBadRequest,
			"invalid next_token %q: want the X-Nomad-NextToken of the previous page", tok)
	}
	return pageKey{index: n, name: name}, nil
}

// paged answers a list as Nomad pages it: the items that pass ?filter=,
// in the list's order (the other way with ?reverse=true), from the one
// ?next_token= names (or the first after it) on, at most ?per_page= of
// them, with X-Nomad-NextToken naming the first item of the next page
// when there is one.
func paged[T any](w http.ResponseWriter, r *http.Request, items []T, o order[T]) ([]T, error) {
	items, err := filtered(r, items)
	if err != nil {
		return nil, err
	}
	lq := optsOf(r).list
	type keyed struct {
		key  pageKey
		item T
	}
	all := make([]keyed, len(items))
	for i, it := range items {
		all[i] = keyed{o.key(it), it}
	}
	dir := 1
	if lq.reverse {
		dir = -1
	}
	slices.SortStableFunc(all, func(a, b keyed) int { return dir * a.key.compare(b.key) })
	if lq.next != "" {
		from, err := o.parseToken(lq.next)
		if err != nil {
			return nil, err
		}
		start, _ := slices.BinarySearchFunc(all, from, func(e keyed, t pageKey) int { return dir * e.key.compare(t) })
		all = all[start:]
	}
	if lq.perPage > 0 && len(all) > lq.perPage {
		w.Header().Set(nextTokenHeader, o.token(all[lq.perPage].key))
		all = all[:lq.perPage]
	}
	out := make([]T, len(all))
	for i, k := range all {
		out[i] = k.item
	}
	return out, nil
}

// The paging orders of the lists Nomad pages.
var (
	jobOrder   = byName(func(j *api.JobListStub) string { return j.Namespace + "." + j.ID })
	allocOrder = byCreateIndex(func(a *api.AllocListStub) uint64 { return a.CreateIndex },
		func(a *api.AllocListStub) string { return a.ID })
	evalOrder      = byCreateIndex((*messages.Evaluation).GetCreateIndex, (*messages.Evaluation).GetID)
	nodeOrder      = byName(func(n *api.NodeListStub) string { return n.ID })
	volumeOrder    = byName(func(v *messages.CSIVolumeListStub) string { return v.GetNamespace() + "." + v.GetID() })
	pluginOrder    = byName((*messages.CSIPluginListStub).GetID)
	namespaceOrder = byName((*messages.Namespace).GetName)
	nodePoolOrder  = byName((*messages.NodePool).GetName)
	varOrder       = byName(func(v *api.VariableMetadata) string { return v.Namespace + "." + v.Path })
)
