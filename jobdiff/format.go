package jobdiff

import (
	"fmt"
	"slices"
	"strings"
)

// Format renders a diff as `nomad job plan` does, without colours: "+" for
// Added, "-" for Deleted, "+/-" for Edited, no marker for None. A group's
// Updates follow its name as "(1 create, 2 ignore)", sorted by kind, and a
// task's or field's Annotations follow it in parentheses. Like Nomad,
// verbose false prints the job's and groups' own fields only when they were
// Edited and shows Added or Deleted tasks by name only; verbose true prints
// everything the diff holds. Every line ends in a newline.
func Format(d *JobDiff, verbose bool) string {
	if d == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%sJob: %q\n", marker(d.Type), d.ID)
	longestField, longestMarker := longest(d.Fields, d.Objects)
	for _, g := range d.TaskGroups {
		longestMarker = max(longestMarker, len(marker(g.Type)))
	}
	if d.Type == TypeEdited || verbose {
		writeBody(&b, d.Fields, d.Objects, 0, longestField, longestMarker)
	}
	for _, g := range d.TaskGroups {
		writeGroup(&b, g, longestMarker-len(marker(g.Type)), verbose)
	}
	return b.String()
}

func writeGroup(b *strings.Builder, g *TaskGroupDiff, pad int, verbose bool) {
	fmt.Fprintf(b, "%s%sTask Group: %q%s\n", marker(g.Type), spaces(pad), g.Name, updates(g.Updates))
	longestField, longestMarker := longest(g.Fields, g.Objects)
	for _, t := range g.Tasks {
		longestMarker = max(longestMarker, len(marker(t.Type)))
	}
	indent := pad + 2
	if g.Type == TypeEdited || verbose {
		writeBody(b, g.Fields, g.Objects, indent, longestField, longestMarker)
	}
	for _, t := range g.Tasks {
		writeTask(b, t, indent, longestMarker-len(marker(t.Type)), verbose)
	}
}

func writeTask(b *strings.Builder, t *TaskDiff, indent, pad int, verbose bool) {
	fmt.Fprintf(b, "%s%s%sTask: %q%s\n", spaces(indent), marker(t.Type), spaces(pad), t.Name, annotations(t.Annotations))
	if t.Type == TypeNone || (t.Type == TypeAdded || t.Type == TypeDeleted) && !verbose {
		return
	}
	longestField, longestMarker := longest(t.Fields, t.Objects)
	writeBody(b, t.Fields, t.Objects, indent+2, longestField, longestMarker)
}

// writeBody writes fields, then objects, one per line at indent, their
// markers padded to longestMarker and their values to longestField.
func writeBody(b *strings.Builder, fields []*FieldDiff, objects []*ObjectDiff, indent, longestField, longestMarker int) {
	for _, f := range fields {
		m := marker(f.Type)
		fmt.Fprintf(b, "%s%s%s%s: %s%s%s\n", spaces(indent), m, spaces(longestMarker-len(m)),
			f.Name, spaces(longestField-len(f.Name)), value(f), annotations(f.Annotations))
	}
	for _, o := range objects {
		m := marker(o.Type)
		pad := longestMarker - len(m)
		fmt.Fprintf(b, "%s%s%s%s {\n", spaces(indent), m, spaces(pad), o.Name)
		lf, lm := longest(o.Fields, o.Objects)
		writeBody(b, o.Fields, o.Objects, indent+pad+2, lf, lm)
		fmt.Fprintf(b, "%s}\n", spaces(indent+len(m)+pad))
	}
}

func value(f *FieldDiff) string {
	switch f.Type {
	case TypeAdded:
		return fmt.Sprintf("%q", f.New)
	case TypeDeleted:
		return fmt.Sprintf("%q", f.Old)
	case TypeEdited:
		return fmt.Sprintf("%q => %q", f.Old, f.New)
	}
	return fmt.Sprintf("%q", f.New)
}

func marker(t string) string {
	switch t {
	case TypeAdded:
		return "+ "
	case TypeDeleted:
		return "- "
	case TypeEdited:
		return "+/- "
	}
	return ""
}

// longest returns the longest field name and the longest marker among
// fields and objects, for alignment.
func longest(fields []*FieldDiff, objects []*ObjectDiff) (field, mark int) {
	for _, f := range fields {
		field = max(field, len(f.Name))
		mark = max(mark, len(marker(f.Type)))
	}
	for _, o := range objects {
		mark = max(mark, len(marker(o.Type)))
	}
	return field, mark
}

func updates(u map[string]uint64) string {
	if len(u) == 0 {
		return ""
	}
	kinds := make([]string, 0, len(u))
	for k := range u {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", u[k], k)
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func annotations(a []string) string {
	if len(a) == 0 {
		return ""
	}
	return " (" + strings.Join(a, ", ") + ")"
}

func spaces(n int) string { return strings.Repeat(" ", max(n, 0)) }
