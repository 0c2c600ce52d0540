package scheduler

import (
	"github.com/troupe-dev/troupe/messages"
)

// nodeDevices is which device instances of a pool node the live allocs
// there, and this plan's placements, hold.
type nodeDevices struct {
	groups []deviceGroup
}

// deviceGroup is one of a node's device groups and its instances' use.
type deviceGroup struct {
	dev  *messages.NodeDeviceResource
	used []int32 // per instance: how many allocs hold it
	free int32   // healthy instances no alloc holds
}

// deviceSlabs hand out the node device state of one Process call from a
// few large allocations instead of several per node.
type deviceSlabs struct {
	nodes  []nodeDevices
	groups []deviceGroup
	used   []int32
}

// carve returns n zeroed elements from the front of *slab, refilling it
// with a new chunk when it is short.
func carve[T any](slab *[]T, n int) []T {
	const chunk = 1024
	if len(*slab) < n {
		*slab = make([]T, max(n, chunk))
	}
	s := (*slab)[:n:n]
	*slab = (*slab)[n:]
	return s
}

func (s *deviceSlabs) newNodeDevices(n *messages.Node) *nodeDevices {
	devs := n.GetNodeResources().GetDevices()
	nd := &carve(&s.nodes, 1)[0]
	nd.groups = carve(&s.groups, len(devs))
	for i, d := range devs {
		g := &nd.groups[i]
		g.dev, g.used = d, carve(&s.used, len(d.Instances))
		for _, in := range d.Instances {
			if in.Healthy {
				g.free++
			}
		}
	}
	return nd
}

// hold adds sign to the holders of instance i of group g.
func (nd *nodeDevices) hold(g, i int, sign int32) {
	grp := &nd.groups[g]
	prev := grp.used[i]
	c := max(prev+sign, 0)
	grp.used[i] = c
	if grp.dev.Instances[i].Healthy {
		switch {
		case prev == 0 && c > 0:
			grp.free--
		case prev > 0 && c == 0:
			grp.free++
		}
	}
}

// addAlloc adds (sign 1) or removes (-1) the instances an alloc holds.
// Instances the node no longer reports are ignored.
func (nd *nodeDevices) addAlloc(a *messages.Allocation, sign int32) {
	for _, t := range a.GetAllocatedResources().GetTasks() {
		for _, ad := range t.GetDevices() {
			g := nd.group(ad)
			if g < 0 {
				continue
			}
			for _, id := range ad.DeviceIDs {
				for i, in := range nd.groups[g].dev.Instances {
					if in.ID == id {
						nd.hold(g, i, sign)
						break
					}
				}
			}
		}
	}
}

// group returns the index of the group an allocated device names, or -1.
func (nd *nodeDevices) group(ad *messages.AllocatedDeviceResource) int {
	for i := range nd.groups {
		d := nd.groups[i].dev
		if d.Vendor == ad.Vendor && d.Type == ad.Type && d.Name == ad.Name {
			return i
		}
	}
	return -1
}

// take gives count free healthy instances of group g, the first in the
// node's order, and holds them.
func (nd *nodeDevices) take(g int, count int32) []string {
	grp := &nd.groups[g]
	ids := make([]string, 0, count)
	for i, in := range grp.dev.Instances {
		if int32(len(ids)) == count {
			break
		}
		if in.Healthy && grp.used[i] == 0 {
			ids = append(ids, in.ID)
			nd.hold(g, i, 1)
		}
	}
	return ids
}

// choose picks, for each request in turn, the matching group with enough
// free instances left after the requests before it whose affinities score
// best (the first on ties), as Nomad's device allocator does. It leaves
// the picks in a.pick and returns the sum of the met affinity weights, or
// the index of the first request that cannot be met (else -1).
func (a *deviceAsk) choose(m *matcher, nd *nodeDevices) (float64, int) {
	left := a.scratch(len(nd.groups))
	for i := range nd.groups {
		left[i] = nd.groups[i].free
	}
	sum := 0.0
	for i := range a.reqs {
		r := &a.reqs[i]
		best, bestSum := -1, 0.0
		for j := range nd.groups {
			d := nd.groups[j].dev
			if left[j] < r.count || !a.matches(m, r, d) {
				continue
			}
			s := 0.0
			if len(r.affs) > 0 {
				s = a.affinity(m, r, d)
			}
			if best < 0 || s > bestSum {
				best, bestSum = j, s
			}
		}
		if best < 0 {
			return 0, i
		}
		a.pick[i] = best
		left[best] -= r.count
		sum += bestSum
	}
	return sum, -1
}

// nodeDevices returns the device use of pool node idx, reading the node's
// allocs from the snapshot on first use. Allocs this plan stops are left
// out; later stops and placements are applied as they happen (addUsage,
// placeAt).
func (p *planner) nodeDevices(idx int) *nodeDevices {
	if nd := p.devs[idx]; nd != nil {
		return nd
	}
	n := p.pool[idx]
	nd := p.devSlabs.newNodeDevices(n)
	if len(nd.groups) > 0 {
		for _, a := range p.nodeAllocs(n.ID) {
			if !a.TerminalStatus() && !p.stopped[a.ID] {
				nd.addAlloc(a, 1)
			}
		}
	}
	p.devs[idx] = nd
	return nd
}

// devicesFit checks gs's device requests against what is free on pool
// node idx. It returns the DimensionExhausted key of the first request
// that cannot be met, or "" and the node's device affinity score: the met
// weights over the sum of all |weights| (0 without affinities).
func (p *planner) devicesFit(ask *deviceAsk, idx int) (float64, string) {
	sum, failed := ask.choose(p.match, p.nodeDevices(idx))
	if failed >= 0 {
		return 0, ask.reqs[failed].key
	}
	if ask.affWeight == 0 {
		return 0, ""
	}
	return sum / ask.affWeight, ""
}

// assignDevices gives alloc a the instances ask's requests get on pool
// node idx (which devicesFit accepted) and holds them.
func (p *planner) assignDevices(ask *deviceAsk, idx int, a *messages.Allocation) {
	nd := p.nodeDevices(idx)
	if _, failed := ask.choose(p.match, nd); failed >= 0 {
		return // not reached: the node was ranked with the same state
	}
	tasks := a.AllocatedResources.Tasks
	for i := range ask.reqs {
		r, g := &ask.reqs[i], ask.pick[i]
		d := nd.groups[g].dev
		tr := tasks[ask.tasks[r.task]]
		tr.Devices = append(tr.Devices, &messages.AllocatedDeviceResource{
			Vendor: d.Vendor, Type: d.Type, Name: d.Name, DeviceIDs: nd.take(g, r.count)})
	}
}
