package scheduler

import (
	"github.com/troupe-dev/troupe/messages"
)

// family links each of a group's wanted allocs (not stopped by the server)
// to the nearest wanted alloc it replaces, following PreviousAllocation
// through allocs stopped since (a replacement that was later updated or
// rescheduled still stands for the original it replaced). Each alloc has
// at most one parent, so the links form trees: lineages.
type family struct {
	allocs   []*messages.Allocation
	byID     map[string]*messages.Allocation
	memo     map[string]*messages.Allocation // ID -> nearest wanted alloc at or above it
	parent   map[string]bool                 // IDs of wanted allocs with a wanted ancestor
	children map[string][]*messages.Allocation
}

func newFamily(allocs []*messages.Allocation) *family {
	f := &family{
		allocs:   allocs,
		byID:     make(map[string]*messages.Allocation, len(allocs)),
		memo:     map[string]*messages.Allocation{},
		parent:   map[string]bool{},
		children: map[string][]*messages.Allocation{},
	}
	for _, a := range allocs {
		f.byID[a.ID] = a
	}
	for _, a := range allocs {
		if a.ServerTerminalStatus() || a.PreviousAllocation == "" {
			continue
		}
		if up := f.wantedAt(a.PreviousAllocation); up != nil && up != a {
			f.parent[a.ID] = true
			f.children[up.ID] = append(f.children[up.ID], a)
		}
	}
	return f
}

// wantedAt returns the nearest wanted alloc at or above id, or nil. The
// walk is memoised and bounded, so long histories and cycles stay cheap.
func (f *family) wantedAt(id string) *messages.Allocation {
	var path []string
	var found *messages.Allocation
	for steps := 0; id != "" && steps <= len(f.allocs); steps++ {
		if r, ok := f.memo[id]; ok {
			found = r
			break
		}
		a := f.byID[id]
		if a == nil {
			break
		}
		if !a.ServerTerminalStatus() {
			found = a
			break
		}
		path = append(path, id)
		id = a.PreviousAllocation
	}
	for _, q := range path {
		f.memo[q] = found
	}
	return found
}

func (f *family) hasChild(id string) bool { return len(f.children[id]) > 0 }

// roots are the lineages' originals, in the group's alloc order: wanted
// allocs with a wanted successor and no wanted ancestor.
func (f *family) roots() []*messages.Allocation {
	var out []*messages.Allocation
	for _, a := range f.allocs {
		if f.hasChild(a.ID) && !f.parent[a.ID] {
			out = append(out, a)
		}
	}
	return out
}

// members lists root's lineage breadth first: ancestors before their
// replacements.
func (f *family) members(root *messages.Allocation) []*messages.Allocation {
	out := []*messages.Allocation{root}
	for i := 0; i < len(out); i++ {
		out = append(out, f.children[out[i].ID]...)
	}
	return out
}
