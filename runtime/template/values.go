package template

import "sort"

// VarItems are a variable's items as nomadVar gives them: keyed by name,
// each printing as its value ({{ .password }}), with consul-template's
// Keys, Values and Tuples and the variable's Metadata.
type VarItems map[string]VarItem

// VarItem is one item.
type VarItem struct {
	Key, Value string
	meta       *VarMeta
}

func (i VarItem) String() string { return i.Value }

// Metadata is the variable the item belongs to.
func (i VarItem) Metadata() *VarMeta { return i.meta }

// VarMeta is a variable's metadata, as nomadVarList gives it.
type VarMeta struct {
	Namespace   string
	Path        string
	CreateIndex uint64
	ModifyIndex uint64
}

func (m *VarMeta) String() string { return m.Path }

func itemsOf(v *Var) VarItems {
	meta := &VarMeta{Namespace: v.Namespace, Path: v.Path, CreateIndex: v.CreateIndex, ModifyIndex: v.ModifyIndex}
	out := make(VarItems, len(v.Items))
	for k, val := range v.Items {
		out[k] = VarItem{Key: k, Value: val, meta: meta}
	}
	return out
}

// Keys are the item names, sorted.
func (v VarItems) Keys() []string {
	out := make([]string, 0, len(v))
	for k := range v {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Values are the items' values in the order of Keys.
func (v VarItems) Values() []string {
	out := make([]string, 0, len(v))
	for _, k := range v.Keys() {
		out = append(out, v[k].Value)
	}
	return out
}

// Tuples are the items in the order of Keys.
func (v VarItems) Tuples() []VarItem {
	out := make([]VarItem, 0, len(v))
	for _, k := range v.Keys() {
		out = append(out, v[k])
	}
	return out
}
