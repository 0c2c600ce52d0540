package scheduler

import (
	"fmt"
	"sort"

	"github.com/troupe-dev/troupe/messages"
)

// CSISource may be implemented by a Snapshot that knows CSI volumes and
// plugins; groups that use CSI volumes are then placed only on nodes with a
// healthy node instance of the volume's plugin, and only while the volume
// can take the claim.
type CSISource interface {
	CSIVolumeByID(namespace, id string) *messages.CSIVolume
	CSIPluginByID(id string) *messages.CSIPlugin
}

// csiReq is one CSI volume a group needs.
type csiReq struct {
	volReason  int             // >= 0: no node can take it (volume missing, unschedulable, writers taken)
	nodes      map[string]bool // nodes with a healthy node instance of its plugin
	nodeReason int
	// farNodes are nodes with a healthy node instance whose topology
	// meets none of the volume's; they are filtered with topoReason.
	farNodes   map[string]bool
	topoReason int
	// perAlloc: the volume is source[<alloc index>], resolved per
	// placement (groupFeas.allocIndex) instead of once per group.
	perAlloc bool
	vr       *messages.VolumeRequest
	resolved bool
}

// singleWriter modes allow one writer claim at a time.
var singleWriter = map[string]bool{messages.CSIAccessSingleNodeWriter: true, messages.CSIAccessMultiNodeSingleWriter: true}

// addCSI adds the group's CSI volume requirements to its feasibility. A
// group with a per_alloc volume is not memoised per node: each placement
// looks at its own volume.
func (f *groupFeas) addCSI(job *messages.Job, tg *messages.TaskGroup, src CSISource) {
	if src == nil {
		return
	}
	names := make([]string, 0, len(tg.GetVolumes()))
	for name := range tg.GetVolumes() {
		names = append(names, name)
	}
	sort.Strings(names)
	f.csiSrc, f.csiNS = src, job.GetNamespace()
	for _, name := range names {
		vr := tg.GetVolumes()[name]
		if vr.GetType() != "csi" {
			continue
		}
		if vr.GetPerAlloc() {
			f.csi = append(f.csi, csiReq{perAlloc: true, vr: vr})
			f.cache = nil
			continue
		}
		f.csi = append(f.csi, f.resolveCSI(vr, vr.GetSource()))
	}
}

// resolveCSI checks the volume id for the request vr.
func (f *groupFeas) resolveCSI(vr *messages.VolumeRequest, id string) csiReq {
	req := csiReq{volReason: -1, resolved: true}
	vol := f.csiSrc.CSIVolumeByID(f.csiNS, id)
	switch {
	case vol == nil:
		req.volReason = f.key(reasonVolumeMissing(id))
	case !vol.GetSchedulable():
		req.volReason = f.key(reasonVolumeUnschedulable(id))
	case !vr.GetReadOnly() && singleWriter[vr.GetAccessMode()] && writers(vol) > 0:
		req.volReason = f.key(reasonVolumeWriters(id))
	default:
		req.nodes, req.farNodes = map[string]bool{}, map[string]bool{}
		if p := f.csiSrc.CSIPluginByID(vol.GetPluginID()); p != nil {
			for nodeID, in := range p.GetNodes() {
				switch {
				case !in.GetHealthy():
				case !topologyMatches(in.GetNodeInfo().GetAccessibleTopology(), vol.GetTopologies()):
					req.farNodes[nodeID] = true
				default:
					req.nodes[nodeID] = true
				}
			}
		}
		req.nodeReason = f.key(reasonPluginMissing(vol.GetPluginID()))
		if len(req.farNodes) > 0 {
			req.topoReason = f.key(FilterCSITopology)
		}
	}
	return req
}

// The filter reasons of CSI volumes and plugins (Nomad's words); CSI
// unblocking looks for them in a failed group's metrics.
func reasonVolumeMissing(id string) string       { return "missing CSI Volume " + id }
func reasonVolumeUnschedulable(id string) string { return "CSI volume " + id + " is unschedulable" }
func reasonVolumeWriters(id string) string {
	return "CSI volume " + id + " has exhausted its available writer claims"
}
func reasonPluginMissing(id string) string {
	return "CSI plugin " + id + " is missing from client or unhealthy"
}

// FilterCSITopology is the filter reason of a node whose node plugin's
// topology meets none of a claimed volume's topologies (Nomad's words).
const FilterCSITopology = "did not meet topology requirement"

// topologyMatches reports whether a node plugin with topology node can
// reach a volume accessible from vol (CSI semantics): a volume without
// topologies is accessible everywhere; otherwise the node's segments must
// hold every key and value of at least one of the volume's topologies.
func topologyMatches(node *messages.CSITopology, vol []*messages.CSITopology) bool {
	if len(vol) == 0 {
		return true
	}
	for _, t := range vol {
		if containsSegments(node.GetSegments(), t.GetSegments()) {
			return true
		}
	}
	return false
}

func containsSegments(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// PerAllocSource is the volume ID a per_alloc volume request names for
// the allocation with index: source[index], as Nomad names them.
func PerAllocSource(source string, index uint32) string {
	return fmt.Sprintf("%s[%d]", source, index)
}

// setAllocIndex resolves the per_alloc volumes for the placement of the
// allocation with index.
func (f *groupFeas) setAllocIndex(index uint32) {
	for i := range f.csi {
		if r := &f.csi[i]; r.perAlloc {
			vr := r.vr
			*r = f.resolveCSI(vr, PerAllocSource(vr.GetSource(), index))
			r.perAlloc, r.vr = true, vr
		}
	}
}

// checkCSI returns the reason node cannot mount the group's CSI volumes,
// or -1.
func (f *groupFeas) checkCSI(n *messages.Node) int {
	for _, req := range f.csi {
		if !req.resolved {
			continue // a per_alloc volume before its placement's index is known
		}
		if req.volReason >= 0 {
			return req.volReason
		}
		if req.farNodes[n.GetID()] {
			return req.topoReason
		}
		if !req.nodes[n.GetID()] {
			return req.nodeReason
		}
	}
	return -1
}

func writers(vol *messages.CSIVolume) int {
	n := 0
	for _, c := range vol.GetClaims() {
		if c.GetMode() == "write" && c.ClaimState() != messages.ClaimFreed {
			n++
		}
	}
	return n
}
