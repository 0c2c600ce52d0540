package jobdiff

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// pair indexes a matched old and new element; -1 for a missing side.
type pair struct{ o, n int }

// diffMessageList compares a repeated message field, one object (named
// after the field) per changed element. Elements whose type has a string
// Name or Label field are matched by it, and an Edited element carries
// that key as an unchanged (None) field so a reader can tell which one it
// is; other elements match an equal element, and the rest pair up in order.
func diffMessageList(name string, md protoreflect.MessageDescriptor, old, new protoreflect.List) []*ObjectDiff {
	key := naturalKey(md)
	var pairs []pair
	if key != nil {
		pairs = matchKeys(listKeys(old, key), listKeys(new, key))
	} else {
		pairs = matchEqual(old, new)
	}
	var objects []*ObjectDiff
	for _, p := range pairs {
		om, nm := zeroOf(md), zeroOf(md)
		if p.o >= 0 {
			om = old.Get(p.o).Message()
		}
		if p.n >= 0 {
			nm = new.Get(p.n).Message()
		}
		d := diffObject(name, om, nm)
		if d == nil {
			continue
		}
		if d.Type == TypeEdited && key != nil {
			k := om.Get(key).String()
			d.Fields = append(d.Fields, &FieldDiff{Type: TypeNone, Name: string(key.Name()), Old: k, New: k})
			sortFields(d.Fields)
		}
		objects = append(objects, d)
	}
	return objects
}

func naturalKey(md protoreflect.MessageDescriptor) protoreflect.FieldDescriptor {
	for _, n := range []protoreflect.Name{"Name", "Label"} {
		if fd := md.Fields().ByName(n); fd != nil && fd.Kind() == protoreflect.StringKind && fd.Cardinality() != protoreflect.Repeated {
			return fd
		}
	}
	return nil
}

func listKeys(l protoreflect.List, key protoreflect.FieldDescriptor) []string {
	keys := make([]string, l.Len())
	for i := range keys {
		keys[i] = l.Get(i).Message().Get(key).String()
	}
	return keys
}

// matchKeys pairs old and new elements with the same key, the n-th
// occurrence of a key with its n-th occurrence; old order first, then the
// new elements left over.
func matchKeys(oldKeys, newKeys []string) []pair {
	at := make(map[string][]int, len(newKeys))
	for j, k := range newKeys {
		at[k] = append(at[k], j)
	}
	used := make([]bool, len(newKeys))
	pairs := make([]pair, 0, max(len(oldKeys), len(newKeys)))
	for i, k := range oldKeys {
		p := pair{i, -1}
		if js := at[k]; len(js) > 0 {
			p.n, at[k] = js[0], js[1:]
			used[p.n] = true
		}
		pairs = append(pairs, p)
	}
	for j := range newKeys {
		if !used[j] {
			pairs = append(pairs, pair{-1, j})
		}
	}
	return pairs
}

// matchEqual drops old and new elements that equal each other, pairs the
// rest in order and leaves the surplus of the longer side unpaired.
func matchEqual(old, new protoreflect.List) []pair {
	used := make([]bool, new.Len())
	var oldLeft, newLeft []int
	for i := range old.Len() {
		oi := old.Get(i).Message().Interface()
		j := -1
		for c := range used {
			if !used[c] && proto.Equal(oi, new.Get(c).Message().Interface()) {
				j = c
				break
			}
		}
		if j < 0 {
			oldLeft = append(oldLeft, i)
			continue
		}
		used[j] = true
	}
	for j, u := range used {
		if !u {
			newLeft = append(newLeft, j)
		}
	}
	pairs := make([]pair, 0, max(len(oldLeft), len(newLeft)))
	for k := range max(len(oldLeft), len(newLeft)) {
		p := pair{-1, -1}
		if k < len(oldLeft) {
			p.o = oldLeft[k]
		}
		if k < len(newLeft) {
			p.n = newLeft[k]
		}
		pairs = append(pairs, p)
	}
	return pairs
}
