package jobdiff

import (
	"cmp"
	"slices"

	"github.com/troupe-dev/troupe/messages"
)

// Diff returns the difference from old to new. A nil old means the job is
// new (Added), a nil new that it is gone (Deleted); equal jobs give a diff
// of Type None. Every task group of either job has a TaskGroupDiff and
// every task a TaskDiff, unchanged ones with Type None, so a planner can
// attach Updates to each; they are sorted by name.
func Diff(old, new *messages.Job) *JobDiff {
	d := &JobDiff{Type: TypeNone, ID: new.GetID()}
	if new == nil {
		d.ID = old.GetID()
	}
	if old == nil && new == nil {
		return d
	}
	d.Fields, d.Objects = diffMessage(old.ProtoReflect(), new.ProtoReflect())
	if old != nil && new != nil && old.GetID() != new.GetID() {
		d.Fields = append(d.Fields, &FieldDiff{Type: TypeEdited, Name: "ID", Old: old.GetID(), New: new.GetID()})
		sortFields(d.Fields)
	}
	d.TaskGroups = groupDiffs(old.GetTaskGroups(), new.GetTaskGroups())
	changed := len(d.Fields) > 0 || len(d.Objects) > 0 ||
		slices.ContainsFunc(d.TaskGroups, func(g *TaskGroupDiff) bool { return g.Type != TypeNone })
	d.Type = kind(old != nil, new != nil, changed)
	return d
}

// kind is the type of a matched entity by which sides exist and whether
// anything in it changed.
func kind(oldOK, newOK, changed bool) string {
	if t := presenceType(oldOK, newOK); t != TypeEdited || changed {
		return t
	}
	return TypeNone
}

func groupDiffs(old, new []*messages.TaskGroup) []*TaskGroupDiff {
	pairs := matchKeys(names(old, (*messages.TaskGroup).GetName), names(new, (*messages.TaskGroup).GetName))
	out := make([]*TaskGroupDiff, 0, len(pairs))
	for _, p := range pairs {
		out = append(out, groupDiff(at(old, p.o), at(new, p.n)))
	}
	slices.SortStableFunc(out, func(a, b *TaskGroupDiff) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

func groupDiff(old, new *messages.TaskGroup) *TaskGroupDiff {
	g := &TaskGroupDiff{Name: cmp.Or(new.GetName(), old.GetName())}
	g.Fields, g.Objects = diffMessage(old.ProtoReflect(), new.ProtoReflect())
	g.Tasks = taskDiffs(old.GetTasks(), new.GetTasks())
	changed := len(g.Fields) > 0 || len(g.Objects) > 0 ||
		slices.ContainsFunc(g.Tasks, func(t *TaskDiff) bool { return t.Type != TypeNone })
	g.Type = kind(old != nil, new != nil, changed)
	return g
}

func taskDiffs(old, new []*messages.Task) []*TaskDiff {
	pairs := matchKeys(names(old, (*messages.Task).GetName), names(new, (*messages.Task).GetName))
	out := make([]*TaskDiff, 0, len(pairs))
	for _, p := range pairs {
		o, n := at(old, p.o), at(new, p.n)
		t := &TaskDiff{Name: cmp.Or(n.GetName(), o.GetName())}
		t.Fields, t.Objects = diffMessage(o.ProtoReflect(), n.ProtoReflect())
		t.Type = kind(o != nil, n != nil, len(t.Fields) > 0 || len(t.Objects) > 0)
		out = append(out, t)
	}
	slices.SortStableFunc(out, func(a, b *TaskDiff) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

func names[T any](items []T, name func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = name(it)
	}
	return out
}

// at returns items[i], or nil for i < 0.
func at[T any](items []*T, i int) *T {
	if i < 0 {
		return nil
	}
	return items[i]
}
