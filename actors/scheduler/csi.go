package scheduler

import (
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
}

// singleWriter modes allow one writer claim at a time.
var singleWriter = map[string]bool{messages.CSIAccessSingleNodeWriter: true, messages.CSIAccessMultiNodeSingleWriter: true}

// addCSI adds the group's CSI volume requirements to its feasibility.
func (f *groupFeas) addCSI(job *messages.Job, tg *messages.TaskGroup, src CSISource) {
	if src == nil {
		return
	}
	names := make([]string, 0, len(tg.GetVolumes()))
	for name := range tg.GetVolumes() {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		vr := tg.GetVolumes()[name]
		if vr.GetType() != "csi" {
			continue
		}
		req := csiReq{volReason: -1}
		vol := src.CSIVolumeByID(job.GetNamespace(), vr.GetSource())
		switch {
		case vol == nil:
			req.volReason = f.key("missing CSI Volume " + vr.GetSource())
		case !vol.GetSchedulable():
			req.volReason = f.key("CSI volume " + vr.GetSource() + " is unschedulable")
		case !vr.GetReadOnly() && singleWriter[vr.GetAccessMode()] && writers(vol) > 0:
			req.volReason = f.key("CSI volume " + vr.GetSource() + " has exhausted its available writer claims")
		default:
			req.nodes = map[string]bool{}
			if p := src.CSIPluginByID(vol.GetPluginID()); p != nil {
				for nodeID, in := range p.GetNodes() {
					if in.GetHealthy() {
						req.nodes[nodeID] = true
					}
				}
			}
			req.nodeReason = f.key("CSI plugin " + vol.GetPluginID() + " is missing from client or unhealthy")
		}
		f.csi = append(f.csi, req)
	}
}

// checkCSI returns the reason node cannot mount the group's CSI volumes,
// or -1.
func (f *groupFeas) checkCSI(n *messages.Node) int {
	for _, req := range f.csi {
		if req.volReason >= 0 {
			return req.volReason
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
		if c.GetMode() == "write" && c.GetState() != "freed" {
			n++
		}
	}
	return n
}
