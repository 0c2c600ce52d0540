package scheduler

import (
	"math"

	"github.com/troupe-dev/troupe/messages"
)

// Ranking constants from Nomad's stack.
const (
	binPackMaxScore = 18.0 // 20 - (10^0 + 10^0)
	skipThreshold   = 0.0  // options scoring at or below it are skipped...
	maxSkip         = 3    // ...at most this many times per placement
)

// Resource dimensions, as Nomad names them in DimensionExhausted.
const (
	dimCPU    = "cpu"
	dimMemory = "memory"
	dimDisk   = "disk"
)

var dimNames = [3]string{dimCPU, dimMemory, dimDisk}

// resources is an amount of cpu (MHz), memory and disk (MB).
type resources struct{ cpu, mem, disk int64 }

func (r *resources) add(o resources, sign int64) {
	r.cpu += sign * o.cpu
	r.mem += sign * o.mem
	r.disk += sign * o.disk
}

// allocResources is what an allocation holds on its node.
func allocResources(a *messages.Allocation) resources {
	var r resources
	ar := a.AllocatedResources
	if ar == nil {
		return r
	}
	for _, t := range ar.Tasks {
		if t.Cpu != nil {
			r.cpu += t.Cpu.CpuShares
		}
		if t.Memory != nil {
			r.mem += t.Memory.MemoryMB
		}
	}
	if ar.Shared != nil {
		r.disk += ar.Shared.DiskMB
	}
	return r
}

// nodeUsage is a pool node's capacity and use. Until ready is set, used
// holds only this plan's changes; the snapshot's use is added lazily the
// first time the node is ranked.
type nodeUsage struct {
	ready bool
	gen   uint32 // changes with used, for fitMemo
	used  resources
	cap   resources
}

// change adds (sign 1) or takes (-1) r to the node's use.
func (u *nodeUsage) change(r resources, sign int64) {
	u.used.add(r, sign)
	u.gen++
}

func nodeCapacity(n *messages.Node) resources {
	var c resources
	if nr := n.NodeResources; nr != nil {
		if nr.Cpu != nil {
			c.cpu = nr.Cpu.CpuShares
		}
		if nr.Memory != nil {
			c.mem = nr.Memory.MemoryMB
		}
		if nr.Disk != nil {
			c.disk = nr.Disk.DiskMB
		}
	}
	if rr := n.ReservedResources; rr != nil {
		if rr.Cpu != nil {
			c.cpu -= rr.Cpu.CpuShares
		}
		if rr.Memory != nil {
			c.mem -= rr.Memory.MemoryMB
		}
		if rr.Disk != nil {
			c.disk -= rr.Disk.DiskMB
		}
	}
	return c
}

// nodeUsage returns the usage of pool node idx, reading the snapshot once.
func (p *planner) nodeUsage(idx int) *nodeUsage {
	u := &p.usage[idx]
	if u.ready {
		return u
	}
	n := p.pool[idx]
	if p.cached != nil {
		u.cap = p.cached.capacity(p.pos[idx])
	} else {
		u.cap = nodeCapacity(n)
	}
	switch {
	case p.logged:
		u.used.add(p.cached.usage(p.pos[idx], p.usageSrc), 1)
	case p.usageSrc != nil:
		c, m, d := p.usageSrc.NodeUsage(n.ID)
		u.used.add(resources{c, m, d}, 1)
	default:
		for _, a := range p.snap.AllocsByNode(n.ID) {
			if !a.TerminalStatus() {
				u.used.add(allocResources(a), 1)
			}
		}
	}
	if p.pendingAt == nil || p.pendingAt[p.pos[idx]] {
		for _, a := range p.opts.Pending.On(n.ID) {
			u.used.add(allocResources(a), 1)
		}
	}
	u.ready = true
	u.gen++
	return u
}

// exhausted returns the first dimension in which ask does not fit, or -1.
func (u *nodeUsage) exhausted(ask resources) int {
	switch {
	case u.used.cpu+ask.cpu > u.cap.cpu:
		return 0
	case u.used.mem+ask.mem > u.cap.mem:
		return 1
	case ask.disk > 0 && u.used.disk+ask.disk > u.cap.disk:
		return 2
	}
	return -1
}

// binPackScore is Nomad's ScoreFitBinPack normalised to 0..1: fuller
// nodes (after placing ask) score higher.
func binPackScore(u *nodeUsage, ask resources) float64 {
	return clampFit(20-freePow(u, ask)) / binPackMaxScore
}

// freePow is 10^(free cpu fraction) + 10^(free memory fraction) after
// placing ask, the quantity both of Nomad's fit scores are made of.
func freePow(u *nodeUsage, ask resources) float64 {
	return pow10(freeFraction(u.used.cpu+ask.cpu, u.cap.cpu)) +
		pow10(freeFraction(u.used.mem+ask.mem, u.cap.mem))
}

// pow10 is 10^x, computed as e^(x ln 10): cheaper than math.Pow.
func pow10(x float64) float64 { return math.Exp(x * math.Ln10) }

func freeFraction(used, capacity int64) float64 {
	if capacity <= 0 {
		return 0
	}
	return 1 - float64(used)/float64(capacity)
}

// selectMetric counts what one placement saw, without allocating.
type selectMetric struct {
	evaluated, filtered, exhausted int32
	dims                           [3]int32
	reasons                        []int32
	keyed                          map[string]int32 // network, devices and cores, by DimensionExhausted key; nil until needed
	top                            topScores        // the best-scoring nodes, for ScoreMetaData
}

func (m *selectMetric) reset(nreasons int) {
	m.evaluated, m.filtered, m.exhausted = 0, 0, 0
	m.dims = [3]int32{}
	m.top.reset()
	clear(m.keyed)
	if cap(m.reasons) < nreasons {
		m.reasons = make([]int32, nreasons)
	}
	m.reasons = m.reasons[:nreasons]
	clear(m.reasons)
}

// allocMetric turns the counts into Nomad's AllocMetric.
func (m *selectMetric) allocMetric(keys []string, pool []*messages.Node) *messages.AllocMetric {
	am := &messages.AllocMetric{
		ScoreMetaData:      m.top.meta(pool),
		NodesEvaluated:     m.evaluated,
		NodesFiltered:      m.filtered,
		NodesExhausted:     m.exhausted,
		ConstraintFiltered: map[string]int32{},
		DimensionExhausted: map[string]int32{},
	}
	for i, n := range m.reasons {
		if n > 0 {
			am.ConstraintFiltered[keys[i]] += n
		}
	}
	for i, n := range m.dims {
		if n > 0 {
			am.DimensionExhausted[dimNames[i]] += n
		}
	}
	for k, n := range m.keyed {
		am.DimensionExhausted[k] += n
	}
	return am
}

type candidate struct {
	idx   int
	score float64
}

// exhaustKeyed counts a node that cannot take a group's ports, devices or
// cores.
func (m *selectMetric) exhaustKeyed(key string) {
	if m.keyed == nil {
		m.keyed = map[string]int32{}
	}
	m.exhausted++
	m.keyed[key]++
}

// selectNode walks the shuffled pool from where the last placement
// stopped, as Nomad's limit iterator does: it stops after gs.limit
// feasible options and returns the best-scoring one (-1 when none fits).
func (p *planner) selectNode(gs *groupState, penalty []string) int {
	m := &p.metric
	m.reset(len(gs.feas.keys))
	n := len(p.pool)
	var skipped [maxSkip]candidate
	nskip, returned := 0, 0
	best := candidate{idx: -1}
	for seen := 0; seen < n && returned < gs.limit; seen++ {
		idx := p.cursor
		if p.cursor++; p.cursor == n {
			p.cursor = 0
		}
		var s nodeScores
		if !p.rankNode(gs, idx, penalty, &s) {
			continue
		}
		score := s.norm()
		m.top.offer(idx, score, &s)
		if score <= skipThreshold && nskip < maxSkip {
			skipped[nskip] = candidate{idx, score}
			nskip++
			continue
		}
		returned++
		if best.idx < 0 || score > best.score {
			best = candidate{idx, score}
		}
	}
	for i := 0; i < nskip && returned < gs.limit; i++ {
		returned++
		if best.idx < 0 || skipped[i].score > best.score {
			best = skipped[i]
		}
	}
	return best.idx
}

// rankNode checks pool node idx for gs and, when it fits, scores it into
// s (scoreNode).
func (p *planner) rankNode(gs *groupState, idx int, penalty []string, s *nodeScores) bool {
	m := &p.metric
	m.evaluated++
	r := p.staticReason(gs, idx)
	if r < 0 {
		r = p.dynamicReason(gs, idx)
	}
	if r >= 0 {
		m.filtered++
		m.reasons[r]++
		return false
	}
	if gs.ports != nil { // before cpu and memory, as Nomad's bin-packing does
		if k := p.portsReason(gs, idx); k != "" {
			m.exhaustKeyed(k)
			return false
		}
	}
	devScore := 0.0
	if gs.feas.devices != nil { // before cpu and memory too
		ds, k := p.devicesFit(gs.feas.devices, idx)
		if k != "" {
			m.exhaustKeyed(k)
			return false
		}
		devScore = ds
	}
	if gs.cores != nil && !p.coresFit(gs.cores, idx) { // before cpu and memory too
		m.exhaustKeyed(dimCores)
		return false
	}
	u := p.nodeUsage(idx)
	if d := u.exhausted(p.askOn(gs, idx)); d >= 0 {
		m.exhausted++
		m.dims[d]++
		return false
	}
	p.scoreNode(gs, idx, u, penalty, devScore, s)
	return true
}

// logLimit is Nomad's candidate limit for n nodes: max(2, ceil(log2 n)).
func logLimit(n int) int {
	if n <= 0 {
		return 2
	}
	return max(2, int(math.Ceil(math.Log2(float64(n)))))
}
