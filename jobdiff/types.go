package jobdiff

import (
	"cmp"
	"slices"
)

// The values of every Type field, as Nomad spells them.
const (
	TypeNone    = "None"
	TypeAdded   = "Added"
	TypeDeleted = "Deleted"
	TypeEdited  = "Edited"
)

// JobDiff is the difference between two versions of a job. Its fields match
// github.com/hashicorp/nomad/api.JobDiff, so its JSON is what the Nomad API
// client decodes from a plan response.
type JobDiff struct {
	Type       string
	ID         string
	Fields     []*FieldDiff
	Objects    []*ObjectDiff
	TaskGroups []*TaskGroupDiff
}

// TaskGroupDiff is the difference of one task group, matched by Name.
// Updates counts the planned changes by kind ("create", "destroy",
// "in-place update", "create/destroy update", "ignore"); Diff leaves it nil
// for the planner to fill.
type TaskGroupDiff struct {
	Type    string
	Name    string
	Fields  []*FieldDiff
	Objects []*ObjectDiff
	Tasks   []*TaskDiff
	Updates map[string]uint64
}

// TaskDiff is the difference of one task, matched by Name within its group.
// Annotations (such as "forces create/destroy update") are the planner's to
// fill; Diff leaves them nil.
type TaskDiff struct {
	Type        string
	Name        string
	Fields      []*FieldDiff
	Objects     []*ObjectDiff
	Annotations []string
}

// FieldDiff is the difference of one scalar value. Old is empty when the
// value was added and New is empty when it was deleted.
type FieldDiff struct {
	Type        string
	Name        string
	Old, New    string
	Annotations []string
}

// ObjectDiff is the difference of a nested message, a map, a repeated
// scalar field or one element of a repeated message field.
type ObjectDiff struct {
	Type    string
	Name    string
	Fields  []*FieldDiff
	Objects []*ObjectDiff
}

// sortFields orders fields by name; fields of the same name (the elements
// of a repeated scalar) by their old, then new value.
func sortFields(fs []*FieldDiff) {
	slices.SortStableFunc(fs, func(a, b *FieldDiff) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Old, b.Old), cmp.Compare(a.New, b.New))
	})
}

// sortObjects orders objects by name and keeps the order in which
// same-named objects (elements of one repeated field) were produced.
func sortObjects(os []*ObjectDiff) {
	slices.SortStableFunc(os, func(a, b *ObjectDiff) int { return cmp.Compare(a.Name, b.Name) })
}

// typeOf derives a container's type from its children's types: Added when
// all were added, Deleted when all were deleted, Edited otherwise, None
// when there are no changed children.
func typeOf(fields []*FieldDiff, objects []*ObjectDiff) string {
	var added, deleted, other bool
	note := func(t string) {
		switch t {
		case TypeAdded:
			added = true
		case TypeDeleted:
			deleted = true
		case TypeEdited:
			other = true
		}
	}
	for _, f := range fields {
		note(f.Type)
	}
	for _, o := range objects {
		note(o.Type)
	}
	switch {
	case other || added && deleted:
		return TypeEdited
	case added:
		return TypeAdded
	case deleted:
		return TypeDeleted
	}
	return TypeNone
}
