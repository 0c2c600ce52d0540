package scheduler

import (
	"github.com/troupe-dev/troupe/messages"
)

// dimCores is Nomad's DimensionExhausted key for a node without enough
// free reservable cores for a group's tasks (resources { cores = N }).
const dimCores = "cores"

// NodeCoresSource may be implemented by a Snapshot that keeps the core IDs
// the non-terminal allocations on each node reserve (cluster/state's Snap
// does; one entry per holder). Process then reads them, for groups that
// ask for cores only, instead of walking the node's allocations.
type NodeCoresSource interface {
	NodeReservedCores(nodeID string) []uint32
}

// coreAsk is what a group's tasks ask in whole cores; nil for a group
// that asks for none, so such groups pay nothing.
type coreAsk struct {
	tasks  []string // the tasks that ask, in group order
	counts []int    // cores per task
	total  int
}

func newCoreAsk(tg *messages.TaskGroup) *coreAsk {
	var ask *coreAsk
	for _, t := range tg.Tasks {
		n := t.GetResources().GetCores()
		if n <= 0 {
			continue
		}
		if ask == nil {
			ask = &coreAsk{}
		}
		ask.tasks = append(ask.tasks, t.Name)
		ask.counts = append(ask.counts, int(n))
		ask.total += int(n)
	}
	return ask
}

// nodeCores counts the holders of each core of a pool node. Until ready
// it holds only this plan's changes; the snapshot's reservations and the
// pending placements' are added the first time a group with cores looks
// at the node (as nodeUsage does).
type nodeCores struct {
	ready      bool
	held       map[uint32]int32
	reservable []uint32 // the node's ReservableCores, read with the rest
}

func (nc *nodeCores) add(cores []uint32, sign int32) {
	if len(cores) == 0 {
		return
	}
	if nc.held == nil {
		nc.held = make(map[uint32]int32, len(cores))
	}
	for _, c := range cores {
		// Below zero before the node is loaded: this plan stopped a holder
		// that the snapshot's count will bring back to zero.
		if v := nc.held[c] + sign; v != 0 {
			nc.held[c] = v
		} else {
			delete(nc.held, c)
		}
	}
}

// freeAtLeast reports whether n of the reservable cores are held by none.
func (nc *nodeCores) freeAtLeast(n int) bool {
	for _, c := range nc.reservable {
		if n <= 0 {
			break
		}
		if nc.held[c] <= 0 {
			n--
		}
	}
	return n <= 0
}

// take holds and returns the first n reservable cores that none holds,
// in the node's order (the lowest first, as the agent reports them).
func (nc *nodeCores) take(n int) []uint32 {
	out := make([]uint32, 0, n)
	for _, c := range nc.reservable {
		if len(out) == n {
			break
		}
		if nc.held[c] <= 0 {
			out = append(out, c)
		}
	}
	nc.add(out, 1)
	return out
}

// allocCores is the core IDs an allocation's tasks reserve (nil, without
// allocating, when none).
func allocCores(a *messages.Allocation) []uint32 {
	var out []uint32
	for _, t := range a.GetAllocatedResources().GetTasks() {
		out = append(out, t.GetCpu().GetReservedCores()...)
	}
	return out
}

// coresAt is pool node idx's core holdings, loaded or not.
func (p *planner) coresAt(idx int) *nodeCores {
	if p.cores == nil {
		p.cores = make([]nodeCores, len(p.pool))
	}
	return &p.cores[idx]
}

// nodeCores is pool node idx's core holdings, reading the snapshot's and
// the pending placements' on first use: from the NodeCache, else from a
// NodeCoresSource, else from the node's allocations.
func (p *planner) nodeCores(idx int) *nodeCores {
	nc := p.coresAt(idx)
	if nc.ready {
		return nc
	}
	n := p.pool[idx]
	src, ok := p.snap.(NodeCoresSource)
	switch {
	case ok && p.logged:
		nc.add(p.cached.reservedCores(p.pos[idx], src), 1)
	case ok:
		nc.add(src.NodeReservedCores(n.ID), 1)
	default:
		for _, a := range p.snap.AllocsByNode(n.ID) {
			if !a.TerminalStatus() {
				nc.add(allocCores(a), 1)
			}
		}
	}
	for _, a := range p.opts.Pending.On(n.ID) {
		nc.add(allocCores(a), 1)
	}
	nc.reservable = n.ReservableCores()
	nc.ready = true
	return nc
}

// coresFit reports whether pool node idx has ask's cores free.
func (p *planner) coresFit(ask *coreAsk, idx int) bool {
	return p.nodeCores(idx).freeAtLeast(ask.total)
}

// askOn is gs's ask on pool node idx. A task that reserves cores holds,
// instead of its cpu, its cores times the node's MHz per core, as Nomad
// counts them.
func (p *planner) askOn(gs *groupState, idx int) resources {
	ask := gs.ask
	if gs.cores != nil {
		ask.cpu += int64(gs.cores.total) * p.pool[idx].SharesPerCore()
	}
	return ask
}

// assignCores gives alloc a's tasks the cores of pool node idx that
// coresFit found free, and holds them.
func (p *planner) assignCores(ask *coreAsk, idx int, a *messages.Allocation) {
	nc, perCore := p.nodeCores(idx), p.pool[idx].SharesPerCore()
	for i, name := range ask.tasks {
		tr := a.AllocatedResources.Tasks[name]
		tr.Cpu = &messages.AllocatedCpuResources{CpuShares: int64(ask.counts[i]) * perCore,
			ReservedCores: nc.take(ask.counts[i])}
	}
}
