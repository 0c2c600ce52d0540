package state

import (
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// ApplyUpsertPluginInstances applies the raft command to the stored
// plugins (by ID): every instance on cmd.NodeID is replaced by cmd's, new
// plugins are created, and plugins left with no instance are deleted. The
// counts are recomputed (CountPlugin). It returns the IDs of the plugins
// it touched, sorted. The FSM and the volume actors share it.
func ApplyUpsertPluginInstances(plugins map[string]*messages.CSIPlugin, cmd *messages.UpsertPluginInstances) []string {
	touched := map[string]bool{}
	for id, p := range plugins {
		_, c := p.GetControllers()[cmd.GetNodeID()]
		_, n := p.GetNodes()[cmd.GetNodeID()]
		if c || n {
			delete(p.Controllers, cmd.GetNodeID())
			delete(p.Nodes, cmd.GetNodeID())
			touched[id] = true
		}
	}
	put := func(info *messages.CSIInfo, controller bool) {
		p := plugins[info.GetPluginID()]
		if p == nil {
			p = &messages.CSIPlugin{ID: info.GetPluginID()}
			plugins[p.ID] = p
		}
		info = proto.Clone(info).(*messages.CSIInfo)
		if controller {
			p.Controllers = setInfo(p.Controllers, cmd.GetNodeID(), info)
		} else {
			p.Nodes = setInfo(p.Nodes, cmd.GetNodeID(), info)
		}
		touched[p.ID] = true
	}
	for _, info := range cmd.GetControllers() {
		put(info, true)
	}
	for _, info := range cmd.GetNodes() {
		put(info, false)
	}
	for id := range touched {
		if p := plugins[id]; len(p.Controllers)+len(p.Nodes) == 0 {
			delete(plugins, id)
		} else {
			CountPlugin(p)
		}
	}
	return slices.Sorted(maps.Keys(touched))
}

func setInfo(m map[string]*messages.CSIInfo, nodeID string, info *messages.CSIInfo) map[string]*messages.CSIInfo {
	if m == nil {
		m = map[string]*messages.CSIInfo{}
	}
	m[nodeID] = info
	return m
}

// CountPlugin recomputes a plugin's healthy and expected counts, whether
// it needs a controller (any instance says so), and its provider and
// version (from the first instance, by node ID, that reports them;
// nodes first, then controllers).
func CountPlugin(p *messages.CSIPlugin) {
	p.ControllersHealthy, p.ControllersExpected = countHealthy(p.Controllers)
	p.NodesHealthy, p.NodesExpected = countHealthy(p.Nodes)
	p.ControllerRequired = false
	p.Provider, p.Version = "", ""
	for _, m := range []map[string]*messages.CSIInfo{p.Nodes, p.Controllers} {
		for _, nodeID := range slices.Sorted(maps.Keys(m)) { // deterministic on every replica
			info := m[nodeID]
			p.ControllerRequired = p.ControllerRequired || info.GetRequiresControllerPlugin()
			if p.Provider == "" && info.GetProvider() != "" {
				p.Provider, p.Version = info.GetProvider(), info.GetProviderVersion()
			}
		}
	}
}

func countHealthy(m map[string]*messages.CSIInfo) (healthy, expected int32) {
	for _, info := range m {
		if info.GetHealthy() {
			healthy++
		}
	}
	return healthy, int32(len(m))
}

// WithPluginHealth copies the plugin's provider, controller need and
// counts into the volume and sets Schedulable: a healthy node instance,
// and a healthy controller when one is required. A nil plugin (not
// running anywhere) makes the volume unschedulable.
func WithPluginHealth(vol *messages.CSIVolume, p *messages.CSIPlugin) {
	vol.Provider, vol.ProviderVersion = p.GetProvider(), p.GetVersion()
	vol.ControllerRequired = p.GetControllerRequired()
	vol.ControllersHealthy, vol.ControllersExpected = p.GetControllersHealthy(), p.GetControllersExpected()
	vol.NodesHealthy, vol.NodesExpected = p.GetNodesHealthy(), p.GetNodesExpected()
	vol.Schedulable = p.GetNodesHealthy() > 0 && (!p.GetControllerRequired() || p.GetControllersHealthy() > 0)
}
