package scheduler

import (
	"sort"

	"github.com/troupe-dev/troupe/messages"
)

// FilterHostVolumes is the filter reason of a node that lacks one of a
// group's host volumes, or offers read-only a volume the group asks to
// write (Nomad's words).
const FilterHostVolumes = "missing compatible host volumes"

// hostVolReq is one host volume a group needs: the node's volume named
// source, writable unless readOnly.
type hostVolReq struct {
	source   string
	readOnly bool
}

// addHostVolumes adds the group's host volume requests (sorted by name)
// to its static checks; a group without any costs nothing more.
func (f *groupFeas) addHostVolumes(tg *messages.TaskGroup) {
	if len(tg.GetVolumes()) == 0 {
		return
	}
	names := make([]string, 0, len(tg.GetVolumes()))
	for name, vr := range tg.GetVolumes() {
		if vr.GetType() == "host" {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return
	}
	sort.Strings(names)
	for _, name := range names {
		vr := tg.GetVolumes()[name]
		f.hostVols = append(f.hostVols, hostVolReq{source: vr.GetSource(), readOnly: vr.GetReadOnly()})
	}
	f.hvReason = f.key(FilterHostVolumes)
}

// hostVolumesFit reports whether node n offers every host volume the
// group asks for, writable where the group writes.
func (f *groupFeas) hostVolumesFit(n *messages.Node) bool {
	for _, r := range f.hostVols {
		v := n.GetHostVolumes()[r.source]
		if v == nil || (v.GetReadOnly() && !r.readOnly) {
			return false
		}
	}
	return true
}
