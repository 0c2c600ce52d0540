package jobdiff

import (
	"slices"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
)

// diffMessage compares two messages of one type field by field; either may
// be invalid (absent), and then every set field of the other is Added or
// Deleted. Unchanged fields produce nothing. The results are sorted by name.
func diffMessage(old, new protoreflect.Message) ([]*FieldDiff, []*ObjectDiff) {
	var fields []*FieldDiff
	var objects []*ObjectDiff
	fds := old.Descriptor().Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if skipped[fd.FullName()] {
			continue
		}
		name := string(fd.Name())
		isMessage := fd.Kind() == protoreflect.MessageKind && !isScalarMessage(fd.Message())
		switch {
		case fd.IsMap():
			objects = appendObject(objects, diffMap(name, fd, old.Get(fd).Map(), new.Get(fd).Map()))
		case fd.IsList() && isMessage:
			objects = append(objects, diffMessageList(name, fd.Message(), old.Get(fd).List(), new.Get(fd).List())...)
		case fd.IsList():
			objects = appendObject(objects, diffScalarList(name, fd, old.Get(fd).List(), new.Get(fd).List()))
		case isMessage && fd.Message().FullName() == structName:
			objects = appendObject(objects, diffStruct(name, get(old, fd), get(new, fd)))
		case isMessage:
			objects = appendObject(objects, diffObject(name, get(old, fd), get(new, fd)))
		default:
			if f := diffScalar(fd, old, new); f != nil {
				fields = append(fields, f)
			}
		}
	}
	sortFields(fields)
	sortObjects(objects)
	return fields, objects
}

func appendObject(objects []*ObjectDiff, o *ObjectDiff) []*ObjectDiff {
	if o == nil {
		return objects
	}
	return append(objects, o)
}

// get returns the message in field fd of m, invalid when it is unset.
func get(m protoreflect.Message, fd protoreflect.FieldDescriptor) protoreflect.Message {
	if m.Has(fd) {
		return m.Get(fd).Message()
	}
	return zeroOf(fd.Message())
}

// zeroOf returns an invalid (absent) message of type md.
func zeroOf(md protoreflect.MessageDescriptor) protoreflect.Message {
	if mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName()); err == nil {
		return mt.Zero()
	}
	return dynamicpb.NewMessageType(md).Zero()
}

// presenceType is the type of a change between an old and a new value by
// which of them exist; "" when neither does.
func presenceType(oldOK, newOK bool) string {
	switch {
	case oldOK && newOK:
		return TypeEdited
	case oldOK:
		return TypeDeleted
	case newOK:
		return TypeAdded
	}
	return ""
}

// diffObject compares a nested message; nil when both are absent or the
// two are equal.
func diffObject(name string, old, new protoreflect.Message) *ObjectDiff {
	t := presenceType(old.IsValid(), new.IsValid())
	if t == "" {
		return nil
	}
	fields, objects := diffMessage(old, new)
	if t == TypeEdited && len(fields) == 0 && len(objects) == 0 {
		return nil
	}
	return &ObjectDiff{Type: t, Name: name, Fields: fields, Objects: objects}
}

// diffStruct compares a google.protobuf.Struct (a task's Config) as one
// object of flattened keys.
func diffStruct(name string, old, new protoreflect.Message) *ObjectDiff {
	t := presenceType(old.IsValid(), new.IsValid())
	if t == "" {
		return nil
	}
	fields := diffFlat(flattenStruct(old), flattenStruct(new))
	if t == TypeEdited && len(fields) == 0 {
		return nil
	}
	return &ObjectDiff{Type: t, Name: name, Fields: fields}
}

// diffFlat compares two flat maps key by key, each key a field.
func diffFlat(old, new map[string]string) []*FieldDiff {
	var fields []*FieldDiff
	for _, k := range unionKeys(old, new) {
		ov, oOK := old[k]
		nv, nOK := new[k]
		if oOK && nOK && ov == nv {
			continue
		}
		fields = append(fields, &FieldDiff{Type: presenceType(oOK, nOK), Name: k, Old: ov, New: nv})
	}
	return fields
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// diffScalar compares one singular scalar field. A set field against an
// unset one is Added or Deleted, except that an unset number, bool or enum
// in a message that exists shows as its zero value in an Edited diff.
func diffScalar(fd protoreflect.FieldDescriptor, old, new protoreflect.Message) *FieldDiff {
	oSet, nSet := old.Has(fd), new.Has(fd)
	if !oSet && !nSet {
		return nil
	}
	oShown := oSet || old.IsValid() && zeroShown(fd)
	nShown := nSet || new.IsValid() && zeroShown(fd)
	var ov, nv string
	if oShown {
		ov = formatValue(fd, old.Get(fd))
	}
	if nShown {
		nv = formatValue(fd, new.Get(fd))
	}
	if oShown && nShown && ov == nv {
		return nil
	}
	return &FieldDiff{Type: presenceType(oShown, nShown), Name: string(fd.Name()), Old: ov, New: nv}
}

// diffMap compares a map field: one object named after the field, holding
// a field (scalar values) or an object (message values) per changed key.
func diffMap(name string, fd protoreflect.FieldDescriptor, old, new protoreflect.Map) *ObjectDiff {
	oldKeys, newKeys := mapKeys(old), mapKeys(new)
	vfd := fd.MapValue()
	isMessage := vfd.Kind() == protoreflect.MessageKind && !isScalarMessage(vfd.Message())
	var fields []*FieldDiff
	var objects []*ObjectDiff
	for _, k := range unionKeys(oldKeys, newKeys) {
		ok, oOK := oldKeys[k]
		nk, nOK := newKeys[k]
		if isMessage {
			om, nm := zeroOf(vfd.Message()), zeroOf(vfd.Message())
			if oOK {
				om = old.Get(ok).Message()
			}
			if nOK {
				nm = new.Get(nk).Message()
			}
			objects = appendObject(objects, diffObject(k, om, nm))
			continue
		}
		var ov, nv string
		if oOK {
			ov = formatValue(vfd, old.Get(ok))
		}
		if nOK {
			nv = formatValue(vfd, new.Get(nk))
		}
		if oOK && nOK && ov == nv {
			continue
		}
		fields = append(fields, &FieldDiff{Type: presenceType(oOK, nOK), Name: k, Old: ov, New: nv})
	}
	t := typeOf(fields, objects)
	if t == TypeNone {
		return nil
	}
	return &ObjectDiff{Type: t, Name: name, Fields: fields, Objects: objects}
}

func mapKeys(m protoreflect.Map) map[string]protoreflect.MapKey {
	keys := make(map[string]protoreflect.MapKey, m.Len())
	m.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		keys[k.String()] = k
		return true
	})
	return keys
}

// diffScalarList compares a repeated scalar field as Nomad compares
// Datacenters: as a multiset, ignoring order, one field named after the
// list per added or removed value.
func diffScalarList(name string, fd protoreflect.FieldDescriptor, old, new protoreflect.List) *ObjectDiff {
	count := func(l protoreflect.List) map[string]int {
		c := make(map[string]int, l.Len())
		for i := range l.Len() {
			c[formatValue(fd, l.Get(i))]++
		}
		return c
	}
	oc, nc := count(old), count(new)
	var fields []*FieldDiff
	for _, v := range unionKeys(oc, nc) {
		for range oc[v] - nc[v] {
			fields = append(fields, &FieldDiff{Type: TypeDeleted, Name: name, Old: v})
		}
		for range nc[v] - oc[v] {
			fields = append(fields, &FieldDiff{Type: TypeAdded, Name: name, New: v})
		}
	}
	t := typeOf(fields, nil)
	if t == TypeNone {
		return nil
	}
	sortFields(fields)
	return &ObjectDiff{Type: t, Name: name, Fields: fields}
}
