package scheduler

import (
	"slices"
	"strings"
	"unsafe"

	"github.com/troupe-dev/troupe/messages"
)

// NodeCache keeps, from one evaluation to the next, what the scheduler
// derives from a node alone: its capacity and, per set of static checks
// (a group's constraints and drivers), whether it passes them. Both are
// pure functions of the node object, so a plan made with the cache is the
// plan made without it; only cold reads are saved. With 10,000 nodes
// those reads (each node's driver map, its resources) were a third of an
// evaluation's time, most of it waiting on memory.
//
// The entries are aligned with the node list of a node pool that the
// snapshot shares (one per index of the nodes table,
// cluster/state/nodes_list.go): a changed node makes a new list, and that
// pool's entries start again. A list is also compared with the copy kept
// (10,000 pointers, a few microseconds), so one changed in place is seen. A NodeCache belongs to one goroutine (the
// scheduler actor passes it to Process); nil disables it.
type NodeCache struct {
	pools map[string]*nodeListCache
	usage []nodeUsage // the planner's per-node usage, reused: 0.6 MB an evaluation at 10,000 nodes
}

// usageBuf returns n zeroed nodeUsage, reusing the last evaluation's.
func (c *NodeCache) usageBuf(n int) []nodeUsage {
	if cap(c.usage) < n {
		c.usage = make([]nodeUsage, n)
	}
	c.usage = c.usage[:n]
	clear(c.usage)
	return c.usage
}

type nodeListCache struct {
	src   []*messages.Node // the list as shared: its identity
	nodes []*messages.Node // a copy, to see a list changed in place (MemSnapshot.AddNode)
	caps  []resources
	capOK []bool
	feas  map[string][]uint16 // static checks' signature -> result per node, as groupFeas.cache
	adm   map[string]*admission

	// used is each node's usage as the snapshot of version (epoch, gen)
	// holds it, where usedOK (syncUsage).
	used   []resources
	usedOK []bool
	// cores is each node's reserved cores as the same version holds
	// them, where coresOK; nil until a group with cores asks.
	cores   [][]uint32
	coresOK []bool
	epoch   any
	gen     uint64
	synced  bool
	posByID map[string]int32 // built when first needed
	pending []bool           // markPending's answer, reused
}

// syncUsage brings the kept usage to src's version: only the nodes whose
// usage changed since are read again (a plan changes a tenth of 10,000).
func (c *nodeListCache) syncUsage(src UsageLogSource) {
	epoch, gen := src.UsageVersion()
	switch {
	case c.synced && c.epoch == epoch && c.gen == gen:
	case c.synced && c.epoch == epoch && c.gen < gen && src.UsageChangedSince(c.epoch, c.gen, c.forgetUsage):
	default:
		clear(c.usedOK)
		clear(c.coresOK)
	}
	c.epoch, c.gen, c.synced = epoch, gen, true
}

func (c *nodeListCache) forgetUsage(nodeID string) {
	if i, ok := c.position(nodeID); ok {
		c.usedOK[i] = false
		if c.coresOK != nil {
			c.coresOK[i] = false
		}
	}
}

// position is a node's position in the list.
func (c *nodeListCache) position(nodeID string) (int32, bool) {
	if c.posByID == nil {
		c.posByID = make(map[string]int32, len(c.nodes))
		for i, n := range c.nodes {
			c.posByID[n.ID] = int32(i)
		}
	}
	i, ok := c.posByID[nodeID]
	return i, ok
}

// markPending returns, per list position, whether the node has pending
// placements: one lookup per pending node, not one per ranked node.
func (c *nodeListCache) markPending(p *Pending) []bool {
	if c.pending == nil {
		c.pending = make([]bool, len(c.nodes))
	}
	clear(c.pending)
	p.eachNode(func(id string) {
		if i, ok := c.position(id); ok {
			c.pending[i] = true
		}
	})
	return c.pending
}

// usage is the snapshot's usage of the node at position i.
func (c *nodeListCache) usage(i int32, src NodeUsageSource) resources {
	if !c.usedOK[i] {
		cpu, mem, disk := src.NodeUsage(c.nodes[i].ID)
		c.used[i], c.usedOK[i] = resources{cpu, mem, disk}, true
	}
	return c.used[i]
}

// reservedCores is the snapshot's reserved cores of the node at position
// i (shared with the snapshot: read-only).
func (c *nodeListCache) reservedCores(i int32, src NodeCoresSource) []uint32 {
	if c.coresOK == nil {
		c.cores, c.coresOK = make([][]uint32, len(c.nodes)), make([]bool, len(c.nodes))
	}
	if !c.coresOK[i] {
		c.cores[i], c.coresOK[i] = src.NodeReservedCores(c.nodes[i].ID), true
	}
	return c.cores[i]
}

// admission is what buildPool's prefilter made of a node list for one set
// of datacenters: the admitted nodes' positions and the counts.
type admission struct {
	pos []int32
	pre prefilter
}

// admits returns the admission kept for the job datacenters dcs, made by
// build when there is none.
func (c *nodeListCache) admits(dcs []string, build func() *admission) *admission {
	key := strings.Join(dcs, "\x00")
	if a, ok := c.adm[key]; ok {
		return a
	}
	if len(c.adm) >= maxCachedChecks {
		clear(c.adm)
	}
	a := build()
	c.adm[key] = a
	return a
}

// maxCachedChecks bounds the sets of static checks kept for one node list,
// and maxCachedPools the pools; past either the cache forgets them all
// (jobs seldom differ in constraints).
const (
	maxCachedChecks = 64
	maxCachedPools  = 16
)

// newNodeCache returns an empty cache.
func newNodeCache() *NodeCache { return &NodeCache{pools: map[string]*nodeListCache{}} }

// list returns the entries for pool's node list nodes, forgetting what
// was known of an older list.
func (c *NodeCache) list(pool string, nodes []*messages.Node) *nodeListCache {
	l := c.pools[pool]
	if l != nil && len(l.src) == len(nodes) && unsafe.SliceData(l.src) == unsafe.SliceData(nodes) &&
		slices.Equal(l.nodes, nodes) {
		return l
	}
	if l == nil && len(c.pools) >= maxCachedPools {
		clear(c.pools)
	}
	l = &nodeListCache{src: nodes, nodes: slices.Clone(nodes), caps: make([]resources, len(nodes)),
		capOK: make([]bool, len(nodes)), feas: map[string][]uint16{}, adm: map[string]*admission{},
		used: make([]resources, len(nodes)), usedOK: make([]bool, len(nodes))}
	c.pools[pool] = l
	return l
}

// capacity is nodeCapacity of the node at position i of the list.
func (c *nodeListCache) capacity(i int32) resources {
	if !c.capOK[i] {
		c.caps[i] = nodeCapacity(c.nodes[i])
		c.capOK[i] = true
	}
	return c.caps[i]
}

// checks returns the per-node results kept for the static checks named
// by sig (zero: not checked yet).
func (c *nodeListCache) checks(sig string) []uint16 {
	if v, ok := c.feas[sig]; ok {
		return v
	}
	if len(c.feas) >= maxCachedChecks {
		clear(c.feas)
	}
	v := make([]uint16, len(c.nodes))
	c.feas[sig] = v
	return v
}

// staticSignature names a group's static checks (the job's and the
// group's constraints, in order, the drivers its tasks need and the host
// volumes it mounts, by source and mode): groups
// with the same signature get the same result, with the same reason index,
// on every node. "" for a group whose checks depend on more than the node
// (CSI volumes, devices), which is not cached across evaluations.
func staticSignature(job *messages.Job, tg *messages.TaskGroup, f *groupFeas) string {
	if f.devices != nil || len(f.csi) > 0 || f.cache == nil {
		return ""
	}
	var b strings.Builder
	writeCons := func(cs []*messages.Constraint) {
		for _, c := range cs {
			b.WriteString(c.LTarget)
			b.WriteByte(0)
			b.WriteString(c.Operand)
			b.WriteByte(0)
			b.WriteString(c.RTarget)
			b.WriteByte(1)
		}
	}
	writeCons(job.Constraints)
	b.WriteByte(2)
	writeCons(tg.Constraints)
	for _, t := range tg.Tasks {
		b.WriteByte(3)
		b.WriteString(t.Driver)
		b.WriteByte(0)
		writeCons(t.Constraints)
	}
	for _, v := range f.hostVols {
		b.WriteByte(4)
		b.WriteString(v.source)
		b.WriteByte(0)
		if v.readOnly {
			b.WriteByte('r')
		} else {
			b.WriteByte('w')
		}
	}
	return b.String()
}
