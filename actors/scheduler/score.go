package scheduler

import (
	"github.com/troupe-dev/troupe/messages"
)

// Scorer names, as Nomad's ScoreMetaData names them.
const (
	ScoreBinPack           = "binpack"
	scoreJobAntiAffinity   = "job-anti-affinity"
	scoreReschedulePenalty = "node-reschedule-penalty"
	ScoreNodeAffinity      = "node-affinity"
	ScoreSpread            = "allocation-spread"
	scoreDevices           = "devices"
)

// Scheduler algorithms (the scheduler configuration's SchedulerAlgorithm).
const (
	algorithmBinPack = messages.SchedulerAlgorithmBinPack
	algorithmSpread  = messages.SchedulerAlgorithmSpread
)

// scorer indexes nodeScores.
type scorer uint8

const (
	scBinPack scorer = iota
	scAntiAffinity
	scPenalty
	scAffinity
	scSpread
	scDevices
	numScorers
)

var scorerNames = [numScorers]string{ScoreBinPack, scoreJobAntiAffinity, scoreReschedulePenalty,
	ScoreNodeAffinity, ScoreSpread, scoreDevices}

// nodeScores is one node's score by scorer. Each is in [-1, 1]; the node's
// normalised score is the mean of those that apply (Nomad's score
// normalisation): a scorer that has nothing to say about a node (no
// collision, no affinity met, a spread boost of 0) is left out of the
// mean rather than pulling it toward 0.
type nodeScores struct {
	v   [numScorers]float64
	set uint8 // bit s: scorer s applies
	sum float64
	n   int
}

func (s *nodeScores) add(k scorer, v float64) {
	s.v[k] = v
	s.set |= 1 << k
	s.sum += v
	s.n++
}

// norm is the mean of the scores that apply.
func (s *nodeScores) norm() float64 {
	if s.n == 0 {
		return 0
	}
	return s.sum / float64(s.n)
}

// maxScoreMeta is how many nodes a placement's metrics keep the scores of
// (Nomad's MaxRetainedNodeScores).
const maxScoreMeta = 5

type scoredNode struct {
	idx  int
	norm float64
	s    nodeScores
}

// topScores keeps the best-scoring nodes of one selection, best first.
// Offering a node that does not make it costs one comparison.
type topScores struct {
	e [maxScoreMeta]scoredNode
	n int
}

func (t *topScores) reset() { t.n = 0 }

func (t *topScores) offer(idx int, norm float64, s *nodeScores) {
	if t.n == maxScoreMeta && norm <= t.e[t.n-1].norm {
		return
	}
	i := t.n
	if i == maxScoreMeta {
		i-- // the worst drops out
	} else {
		t.n++
	}
	for ; i > 0 && t.e[i-1].norm < norm; i-- {
		t.e[i] = t.e[i-1]
	}
	t.e[i] = scoredNode{idx: idx, norm: norm, s: *s}
}

// meta is the kept nodes' ScoreMetaData, best first (nil when none was
// scored). Each lists the scorers that apply to its node in ScoreNames and
// ScoreValues: four allocations for the whole list, where a map per node
// would be ten. (Nomad also lists job-anti-affinity,
// node-reschedule-penalty and node-affinity at 0 when they do not apply.)
func (t *topScores) meta(pool []*messages.Node) []*messages.NodeScoreMeta {
	if t.n == 0 {
		return nil
	}
	total := 0
	for i := range t.n {
		total += t.e[i].s.n
	}
	names, values := make([]string, 0, total), make([]float64, 0, total)
	backing := make([]messages.NodeScoreMeta, t.n)
	out := make([]*messages.NodeScoreMeta, t.n)
	for i := range t.n {
		e, m := &t.e[i], &backing[i]
		from := len(names)
		for k := range numScorers {
			if e.s.set&(1<<k) != 0 {
				names, values = append(names, scorerNames[k]), append(values, e.s.v[k])
			}
		}
		m.NodeID, m.NormScore = pool[e.idx].ID, e.norm
		m.ScoreNames, m.ScoreValues = names[from:len(names):len(names)], values[from:len(values):len(values)]
		out[i] = m
	}
	return out
}

// fitScore is the bin-packing scorer: with algorithmSpread the emptier
// node scores higher, otherwise the fuller.
func (p *planner) fitScore(u *nodeUsage, ask resources) float64 {
	if p.spreadFit {
		return spreadFitScore(u, ask)
	}
	return binPackScore(u, ask)
}

// spreadFitScore is Nomad's ScoreFitSpread normalised to 0..1: emptier
// nodes (after placing ask) score higher.
func spreadFitScore(u *nodeUsage, ask resources) float64 {
	return clampFit(freePow(u, ask)-2) / binPackMaxScore
}

// fitMemo is a group's fit score on one node, valid while the node's
// usage generation is gen-1.
type fitMemo struct {
	gen   uint32
	score float64
}

// groupFit is fitScore for gs on pool node idx, remembered while the
// node's use does not change when gs ranks many candidates per placement
// (each node is then ranked many times, and placing changes one node).
func (p *planner) groupFit(gs *groupState, idx int, u *nodeUsage) float64 {
	if gs.fits == nil {
		return p.fitScore(u, p.askOn(gs, idx))
	}
	m := &gs.fits[idx]
	if m.gen != u.gen+1 {
		m.score, m.gen = p.fitScore(u, p.askOn(gs, idx)), u.gen+1
	}
	return m.score
}

// clampFit bounds a raw fit score to Nomad's 0..binPackMaxScore.
func clampFit(score float64) float64 {
	return min(max(score, 0), binPackMaxScore)
}

// scoreNode scores pool node idx, whose usage u fits gs, into s: the fit,
// the device affinities (devScore), the job anti-affinity, the
// rescheduling penalty, the node affinities and the spreads.
func (p *planner) scoreNode(gs *groupState, idx int, u *nodeUsage, penalty []string, devScore float64, s *nodeScores) {
	s.add(scBinPack, p.groupFit(gs, idx, u))
	if gs.feas.devices != nil && gs.feas.devices.affWeight > 0 {
		s.add(scDevices, devScore)
	}
	if c := gs.collisions[idx]; c > 0 {
		s.add(scAntiAffinity, -float64(c+1)/float64(gs.desired))
	}
	if len(penalty) > 0 && contains(penalty, p.pool[idx].ID) {
		s.add(scPenalty, -1)
	}
	if gs.affs != nil {
		if v := gs.affs.score(p.match, p.pool, idx); v != 0 {
			s.add(scAffinity, v)
		}
	}
	if gs.spreads != nil {
		if v := gs.spreads.score(p.pool, idx); v != 0 {
			s.add(scSpread, v)
		}
	}
}
