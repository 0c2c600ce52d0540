package scheduler

import (
	"github.com/troupe-dev/troupe/messages"
	"maps"
	"slices"
)

// groupState is a task group's placement state within one Process call.
type groupState struct {
	tg         *messages.TaskGroup
	ask        resources
	desired    int32
	feas       groupFeas
	ports      *portAsk                     // nil when the group asks for no ports
	cores      *coreAsk                     // nil when no task asks for cores
	collisions []int32                      // proposed allocs of this group per pool node
	spreads    *spreadSet                   // nil when neither the group nor the job spreads
	affs       *affinitySet                 // nil when no affinity applies to the group
	limit      int                          // candidates ranked per placement
	fits       []fitMemo                    // per pool node, when limit makes nodes ranked again and again; else nil
	allocated  *messages.AllocatedResources // shared by its new allocs (groupAllocated); nil until one
}

func newGroupState(job *messages.Job, tg *messages.TaskGroup, poolSize int, memo bool) *groupState {
	gs := &groupState{
		tg:         tg,
		ask:        groupAsk(tg),
		desired:    max(1, tg.Count),
		feas:       newGroupFeas(job, tg),
		ports:      newPortAsk(tg),
		cores:      newCoreAsk(tg),
		collisions: make([]int32, poolSize),
	}
	if memo { // a generic job's group; system jobs rank no candidates
		gs.feas.cache = make([]uint16, poolSize)
		gs.spreads = newSpreadSet(job, tg, poolSize)
		gs.affs = newAffinitySet(job, tg, poolSize)
	}
	return gs
}

// scoredLimit is how many candidates a placement of a group with spreads
// or affinities ranks: as in Nomad, at least 100 and at least the group's
// count, so that the scores that depend on the node's attributes see
// enough of the cluster.
func scoredLimit(tg *messages.TaskGroup, limit int) int {
	return max(limit, minScoredLimit, int(tg.Count))
}

const minScoredLimit = 100

// groupAsk is the sum of the group's task resources; the cpu of a task
// that reserves cores depends on the node (askOn).
func groupAsk(tg *messages.TaskGroup) resources {
	var r resources
	for _, t := range tg.Tasks {
		if t.GetResources().GetCores() <= 0 {
			r.cpu += int64(t.GetResources().GetCPU())
		}
		r.mem += int64(t.GetResources().GetMemoryMB())
		r.disk += int64(t.GetResources().GetDiskMB())
	}
	return r
}

// allocated is the AllocatedResources of a new alloc of tg.
func allocated(tg *messages.TaskGroup) *messages.AllocatedResources {
	tasks := make(map[string]*messages.AllocatedTaskResources, len(tg.Tasks))
	var disk int64
	for _, t := range tg.Tasks {
		r := t.GetResources()
		tasks[t.Name] = &messages.AllocatedTaskResources{
			Cpu: &messages.AllocatedCpuResources{CpuShares: int64(r.GetCPU())},
			Memory: &messages.AllocatedMemoryResources{MemoryMB: int64(r.GetMemoryMB()),
				MemoryMaxMB: int64(r.GetMemoryMaxMB())},
		}
		disk += int64(r.GetDiskMB())
	}
	ar := &messages.AllocatedResources{Tasks: tasks}
	if disk > 0 {
		ar.Shared = &messages.AllocatedSharedResources{DiskMB: disk}
	}
	return ar
}

// buildPool reads the nodes once: for generic jobs the ready, eligible
// nodes of the job's node pool in its datacenters, shuffled; for system
// jobs every node in snapshot order (systemNode skips other pools). It
// then counts the job's existing allocs per node.
func (p *planner) buildPool(generic bool) {
	p.pre.byDC = map[string]int32{}
	p.pre.dcOK = map[string]bool{}
	p.pre.pool = jobPool(p.job)
	if generic {
		p.pool, p.pos = p.admitted()
		pool, pos := p.pool, p.pos
		p.opts.Rand.Shuffle(len(pool), func(i, j int) {
			pool[i], pool[j] = pool[j], pool[i]
			if pos != nil {
				pos[i], pos[j] = pos[j], pos[i]
			}
		})
	} else {
		p.pool = p.snap.Nodes() // other pools' allocs are stopped as not needed
		p.pre.inPool = countInPool(p.pre.pool, p.pool)
	}
	p.pooled = true
	p.limit = logLimit(len(p.pool))
	if p.opts.NodeCache != nil {
		p.usage = p.opts.NodeCache.usageBuf(len(p.pool))
	} else {
		p.usage = make([]nodeUsage, len(p.pool))
	}
	for _, tg := range p.job.TaskGroups {
		gs := newGroupState(p.job, tg, len(p.pool), generic)
		gs.limit = p.limit
		if gs.spreads != nil || gs.affs != nil {
			gs.limit = scoredLimit(tg, p.limit)
			gs.fits = make([]fitMemo, len(p.pool))
		}
		if src, ok := p.snap.(CSISource); ok {
			gs.feas.addCSI(p.job, tg, src)
		}
		if p.cached != nil {
			if sig := staticSignature(p.job, tg, &gs.feas); sig != "" {
				gs.feas.cross = p.cached.checks(sig)
			}
		}
		p.groups[tg.Name] = gs
		if gs.ports != nil && p.ports == nil {
			p.ports = make([]*nodePorts, len(p.pool))
		}
		if gs.feas.devices != nil && p.devs == nil {
			p.devs = make([]*nodeDevices, len(p.pool))
		}
	}
	for _, a := range p.jobAllocs {
		switch {
		case a.TerminalStatus():
		case p.stopped[a.ID]:
			// Stopped by this plan before the pool existed: it holds
			// nothing, but its node's spread values count as seen, as
			// they would had it been stopped after.
			p.addUsage(a, -1)
			p.account(a, 1)
			p.account(a, -1)
		default:
			p.account(a, 1)
		}
	}
}

// poolIndex maps a node ID to its pool position (-1 when not in the pool),
// building the map on first use.
func (p *planner) poolIndex(id string) int {
	if p.index == nil {
		p.index = make(map[string]int32, len(p.pool))
		for i, n := range p.pool {
			p.index[n.ID] = int32(i)
		}
	}
	if i, ok := p.index[id]; ok {
		return int(i)
	}
	return -1
}

func (p *planner) addUsage(a *messages.Allocation, sign int64) {
	if i := p.poolIndex(a.NodeID); i >= 0 {
		p.usage[i].change(allocResources(a), sign)
		if p.ports != nil && p.ports[i] != nil {
			p.ports[i].addAlloc(a, int32(sign))
		}
		if p.devs != nil && p.devs[i] != nil {
			p.devs[i].addAlloc(a, int32(sign))
		}
		if cores := allocCores(a); len(cores) > 0 {
			p.coresAt(i).add(cores, int32(sign))
		}
	}
}

// account adds (sign 1) or removes (-1) a proposed alloc of the job from
// the anti-affinity, spread and distinct_property counts.
func (p *planner) account(a *messages.Allocation, sign int32) {
	p.accountAt(a, p.poolIndex(a.NodeID), sign)
}

func (p *planner) accountAt(a *messages.Allocation, idx int, sign int32) {
	var node *messages.Node
	if gs := p.groups[a.TaskGroup]; gs != nil {
		if idx >= 0 {
			gs.collisions[idx] += sign
		}
		if gs.spreads != nil {
			if idx < 0 {
				if node = p.allocNode(a, idx); node == nil {
					return
				}
			}
			gs.spreads.account(p.pool, idx, node, sign)
		}
	}
	for _, gs := range p.groups {
		for _, pl := range gs.feas.props {
			if !pl.jobScope && gs.tg.Name != a.TaskGroup {
				continue
			}
			if node == nil {
				if node = p.allocNode(a, idx); node == nil {
					return
				}
			}
			if v, ok := pl.target.resolve(node); ok {
				pl.counts[v] += sign
			}
		}
	}
}

func (p *planner) allocNode(a *messages.Allocation, idx int) *messages.Node {
	if idx >= 0 {
		return p.pool[idx]
	}
	return p.node(a.NodeID)
}

// release takes an alloc this plan stops out of the node's usage and the
// job's counts; unrelease undoes it when a conditional stop is dropped.
func (p *planner) release(a *messages.Allocation) {
	p.stopped[a.ID] = true
	if p.pooled && !a.TerminalStatus() {
		p.account(a, -1)
		p.addUsage(a, -1)
	}
}

func (p *planner) unrelease(a *messages.Allocation) {
	delete(p.stopped, a.ID)
	if p.pooled && !a.TerminalStatus() {
		p.account(a, 1)
		p.addUsage(a, 1)
	}
}

// runGeneric plans a service or batch job.
func (p *planner) runGeneric() {
	byGroup := map[string][]*messages.Allocation{}
	for _, a := range p.jobAllocs {
		byGroup[a.TaskGroup] = append(byGroup[a.TaskGroup], a)
	}
	batch := p.job.Type == jobTypeBatch
	plans := make([]groupPlan, len(p.job.TaskGroups))
	need := false
	for i, tg := range p.job.TaskGroups {
		plans[i] = p.reconcile(tg, byGroup[tg.Name], batch)
		need = need || len(plans[i].places) > 0
		delete(byGroup, tg.Name)
	}
	for _, a := range p.jobAllocs {
		if _, gone := byGroup[a.TaskGroup]; gone && !a.TerminalStatus() {
			p.stop(a, descNotNeeded, "")
		}
	}
	if need {
		p.buildPool(true)
	}
	var later []delayed
	for i, tg := range p.job.TaskGroups {
		p.placeGeneric(p.groups[tg.Name], plans[i].places)
		later = append(later, plans[i].later...)
	}
	p.followups(later)
}

// placeGeneric places a group's requests one at a time. After the first
// failure the rest are only counted (Nomad's coalesced failures).
func (p *planner) placeGeneric(gs *groupState, reqs []placeReq) {
	for i := range reqs {
		req := &reqs[i]
		if m := p.failed[gs.tg.Name]; m != nil {
			m.CoalescedFailures++
			p.queued[gs.tg.Name]++
			continue
		}
		if max := p.opts.MaxPlacements; max > 0 && p.placedNew >= max {
			p.capped = true
			p.queued[gs.tg.Name]++
			continue
		}
		if req.stopPrev != nil {
			p.release(req.prev)
		}
		gs.feas.setAllocIndex(req.index)
		var penalty []string
		if req.reschedule {
			penalty = penaltyNodes(req.prev)
		}
		idx := p.selectNode(gs, penalty)
		if idx < 0 && p.preemption && p.placePreempting(gs, req) {
			continue
		}
		if idx < 0 {
			if req.stopPrev != nil {
				p.unrelease(req.prev)
			}
			p.failPlacement(gs)
			continue
		}
		p.placeAt(gs, req, idx)
	}
}

func (p *planner) failPlacement(gs *groupState) {
	m := p.metric.allocMetric(gs.feas.keys, p.pool)
	m.NodesInPool, m.NodePool = int32(len(p.pool)), p.pre.pool
	m.NodesPreempted = p.evict.takeExamined()
	p.pre.into(m)
	p.failed[gs.tg.Name] = m
	p.queued[gs.tg.Name]++
}

// placeAt adds an alloc for req on pool node idx, whose usage is loaded.
func (p *planner) placeAt(gs *groupState, req *placeReq, idx int) {
	a := p.newAlloc(gs, req, p.pool[idx])
	if len(gs.tg.Networks) > 0 {
		if a.AllocatedResources.Shared == nil {
			a.AllocatedResources.Shared = &messages.AllocatedSharedResources{}
		}
		a.AllocatedResources.Shared.Networks = p.allocNetworks(gs, idx)
		if gs.ports != nil {
			p.nodePorts(idx).addAlloc(a, 1)
		}
	}
	if gs.feas.devices != nil {
		p.assignDevices(gs.feas.devices, idx, a)
	}
	if gs.cores != nil {
		p.assignCores(gs.cores, idx, a)
	}
	p.plan.Place = append(p.plan.Place, a)
	p.placedNew++
	p.usage[idx].change(p.askOn(gs, idx), 1)
	p.accountAt(a, idx, 1)
	if req.stopPrev != nil {
		p.deferred = append(p.deferred, req.stopPrev)
	}
}

func (p *planner) newAlloc(gs *groupState, req *placeReq, node *messages.Node) *messages.Allocation {
	now := p.opts.Now.UnixNano()
	a := &messages.Allocation{
		ID:                 p.opts.NewID(),
		Namespace:          p.job.Namespace,
		EvalID:             p.eval.ID,
		Name:               req.name,
		NodeID:             node.ID,
		NodeName:           node.Name,
		JobID:              p.job.ID,
		JobVersion:         p.job.Version,
		TaskGroup:          gs.tg.Name,
		AllocatedResources: p.groupAllocated(gs),
		DesiredStatus:      messages.AllocDesiredStatusRun,
		ClientStatus:       messages.AllocClientStatusPending,
		Metrics: &messages.AllocMetricRef{NodesEvaluated: p.metric.evaluated,
			NodesFiltered: p.metric.filtered, ScoreMetaData: p.scoreMeta(gs)},
		CreateTime: now,
		ModifyTime: now,
		Index:      req.index,
	}
	if req.prev != nil {
		a.PreviousAllocation = req.prev.ID
	}
	a.DeploymentID = p.deploymentOf(gs.tg)
	if req.canary && a.DeploymentID != "" {
		a.DeploymentStatus = &messages.AllocDeploymentStatus{Canary: true}
	}
	if req.reschedule {
		a.RescheduleTracker = nextTracker(req.prev, gs.tg.ReschedulePolicy, p.opts.Now)
	}
	return a
}

// admitted returns the nodes a generic job's pool admits (prefilter.admit,
// which counts the others), in node list order, and with NodeCache their
// positions in the list: the nodes, the counts and the positions are kept
// per set of datacenters, as they depend on nothing else.
func (p *planner) admitted() ([]*messages.Node, []int32) {
	nodes := p.poolNodes()
	if p.opts.NodeCache == nil {
		pool := make([]*messages.Node, 0, len(nodes))
		for _, n := range nodes {
			if p.pre.admit(p.job, n) {
				pool = append(pool, n)
			}
		}
		return pool, nil
	}
	p.cached = p.opts.NodeCache.list(p.pre.pool, nodes)
	if src, ok := p.snap.(UsageLogSource); ok {
		p.cached.syncUsage(src)
		p.logged = true
	}
	p.pendingAt = p.cached.markPending(p.opts.Pending)
	adm := p.cached.admits(p.job.Datacenters, func() *admission {
		a := &admission{}
		for i, n := range nodes {
			if p.pre.admit(p.job, n) {
				a.pos = append(a.pos, int32(i))
			}
		}
		a.pre = p.pre
		return a
	})
	p.pre = adm.pre
	p.pre.byDC = maps.Clone(adm.pre.byDC)
	pool, pos := make([]*messages.Node, len(adm.pos)), slices.Clone(adm.pos)
	for i, at := range pos {
		pool[i] = nodes[at]
	}
	return pool, pos
}

// groupAllocated is a new alloc's AllocatedResources: for a group that
// asks for no ports, devices or cores (nothing is added to it per alloc)
// one value shared by the plan's allocs, read-only from here on; else a
// new one.
func (p *planner) groupAllocated(gs *groupState) *messages.AllocatedResources {
	if gs.ports != nil || gs.feas.devices != nil || gs.cores != nil {
		return p.allocated(gs.tg)
	}
	if gs.allocated == nil {
		gs.allocated = p.allocated(gs.tg)
	}
	return gs.allocated
}

// scoreMeta is the ScoreMetaData a placement of gs keeps: the best nodes'
// scores where spreads or affinities chose among them, or when asked
// (Options.ScoreMetaData: job plan). A plain bin-pack placement keeps
// none: its scores say only that the node was the fullest that fit, and
// five of them on every stored allocation were more than half its memory
// (1.1 KB of 2; a million allocations held 1 GiB more).
func (p *planner) scoreMeta(gs *groupState) []*messages.NodeScoreMeta {
	if !p.opts.ScoreMetaData && gs.spreads == nil && gs.affs == nil {
		return nil
	}
	return p.metric.top.meta(p.pool)
}
