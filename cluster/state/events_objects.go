package state

import (
	"maps"
	"slices"

	"github.com/troupe-dev/troupe/messages"
)

// The EventCollector's object methods look each object up as of the
// command (or, once deleted, as it was before) and add its event. Stored
// objects are copied on write, so an object whose pointer differs from
// the one before the command is one the command changed.

func (c *EventCollector) job(ns, id string) {
	if id == "" {
		return
	}
	j, deleted := c.snap.JobByID(ns, id), false
	if j == nil && c.prev != nil {
		j, deleted = c.prev.JobByID(ns, id), true
	}
	if j != nil {
		c.Add(TopicJob, j.ID, j.Namespace, nil, j, deleted)
	}
}

// jobIfChanged adds the job's event when the command changed it (its
// status follows its allocations).
func (c *EventCollector) jobIfChanged(ns, id string) {
	if c.prev != nil && c.snap.JobByID(ns, id) != c.prev.JobByID(ns, id) {
		c.job(ns, id)
	}
}

func (c *EventCollector) evals(evals ...*messages.Evaluation) {
	for _, e := range evals {
		c.evalID(e.GetID())
	}
}

func (c *EventCollector) evalID(id string) {
	if id == "" {
		return
	}
	if e := c.snap.EvalByID(id); e != nil {
		c.Add(TopicEvaluation, e.ID, e.Namespace, nonEmpty(e.JobID, e.DeploymentID), e, false)
	}
}

func (c *EventCollector) alloc(id string) {
	if id == "" {
		return
	}
	a := c.snap.AllocByID(id)
	if a == nil {
		return
	}
	c.Add(TopicAllocation, a.ID, a.Namespace, nonEmpty(a.JobID, a.DeploymentID), a, false)
	c.jobIfChanged(a.Namespace, a.JobID)
	if a.DeploymentID != "" && c.prev != nil && c.snap.DeploymentByID(a.DeploymentID) != c.prev.DeploymentByID(a.DeploymentID) {
		c.deployment(a.DeploymentID)
	}
}

// nodeAllocs adds the allocations of a node the command changed (a node
// that went down loses them).
func (c *EventCollector) nodeAllocs(nodeID string) {
	if c.prev == nil || nodeID == "" {
		return
	}
	before := map[string]*messages.Allocation{}
	for _, a := range c.prev.AllocsByNode(nodeID) {
		before[a.ID] = a
	}
	for _, a := range c.snap.AllocsByNode(nodeID) {
		if before[a.ID] != a {
			c.alloc(a.ID)
		}
	}
}

func (c *EventCollector) node(id string) {
	if id == "" {
		return
	}
	n := c.snap.NodeByID(id)
	if n == nil && c.prev != nil {
		n = c.prev.NodeByID(id)
	}
	if n != nil {
		c.Add(TopicNode, n.ID, "", nil, n, false)
	}
}

func (c *EventCollector) deployment(id string) {
	if id == "" {
		return
	}
	if d := c.snap.DeploymentByID(id); d != nil {
		c.Add(TopicDeployment, d.ID, d.Namespace, nonEmpty(d.JobID), d, false)
	}
}

func (c *EventCollector) pool(name string) {
	p := c.snap.NodePoolByName(name)
	if p == nil && c.prev != nil {
		p = c.prev.NodePoolByName(name)
	}
	if p != nil {
		c.Add(TopicNodePool, p.Name, "", nil, p, false)
	}
}

func (c *EventCollector) volume(id string) {
	v := c.snap.CSIVolumeAnyNamespace(id)
	if v == nil && c.prev != nil {
		v = c.prev.CSIVolumeAnyNamespace(id)
	}
	if v != nil {
		c.Add(TopicCSIVolume, v.ID, v.Namespace, nonEmpty(v.PluginID), v, false)
	}
}

func (c *EventCollector) plugin(id string) {
	p := c.snap.CSIPluginByID(id)
	if p == nil && c.prev != nil {
		p = c.prev.CSIPluginByID(id) // its last instance went
	}
	if p != nil {
		c.Add(TopicCSIPlugin, p.ID, "", nil, p, false)
	}
}

// nodePlugins adds the plugins a node's fingerprint changed (created,
// changed or deleted with their last instance; one the node no longer
// runs included) and their volumes whose health it changed.
func (c *EventCollector) nodePlugins(u *messages.UpsertPluginInstances) {
	if c.prev == nil {
		return // what changed is known only from the state before
	}
	ids := map[string]bool{}
	for _, in := range append(slices.Clone(u.Controllers), u.Nodes...) {
		ids[in.GetPluginID()] = true
	}
	for _, p := range c.prev.CSIPlugins() {
		if p.Controllers[u.NodeID] != nil || p.Nodes[u.NodeID] != nil {
			ids[p.ID] = true
		}
	}
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		if c.snap.CSIPluginByID(id) == c.prev.CSIPluginByID(id) {
			continue // unchanged
		}
		c.plugin(id)
		for _, v := range c.snap.CSIVolumesByPlugin(id) {
			if c.prev.CSIVolumeByID(v.Namespace, v.ID) != v {
				c.volume(v.ID)
			}
		}
	}
}

// jobDeployments adds the job's deployments the command changed.
func (c *EventCollector) jobDeployments(ns, jobID string) {
	if c.prev == nil {
		return
	}
	for _, d := range c.snap.DeploymentsByJob(ns, jobID) {
		if c.prev.DeploymentByID(d.ID) != d {
			c.deployment(d.ID)
		}
	}
}

// allocServices adds the registrations of an allocation the command
// wrote or removed.
func (c *EventCollector) allocServices(allocID string) {
	now := c.snap.ServicesByAlloc(allocID)
	var before []*messages.ServiceRegistration
	if c.prev != nil {
		before = c.prev.ServicesByAlloc(allocID)
	}
	kept := map[string]*messages.ServiceRegistration{}
	for _, s := range now {
		kept[s.ID] = s
	}
	was := map[string]*messages.ServiceRegistration{}
	for _, s := range before {
		was[s.ID] = s
		if kept[s.ID] == nil {
			c.service(s, true)
		}
	}
	for _, s := range now {
		if was[s.ID] != s {
			c.service(s, false)
		}
	}
}

func (c *EventCollector) service(s *messages.ServiceRegistration, deleted bool) {
	if s == nil {
		return
	}
	typ := c.typ
	if deleted {
		c.typ = "ServiceDeregistration"
	}
	c.Add(TopicService, s.ID, s.Namespace, nonEmpty(s.JobID, s.ServiceName), s, false)
	c.typ = typ
}

// nonEmpty is the filter keys that are set.
func nonEmpty(keys ...string) []string {
	var out []string
	for _, k := range keys {
		if k != "" {
			out = append(out, k)
		}
	}
	return out
}
