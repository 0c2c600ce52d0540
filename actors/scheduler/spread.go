package scheduler

import (
	"github.com/troupe-dev/troupe/messages"
)

// spreadSet is a task group's spread blocks, its own and then the job's,
// with the running counts they score from.
//
// The scores are incremental. Each spread maps every attribute value to a
// bucket (a small integer), and keeps per bucket the number of the group's
// live allocations plus this plan's placements minus its stops: the
// planner's account/release calls, which every placement and stop goes
// through, add or take one from the bucket of the allocation's node. A
// pool node's bucket is resolved once and remembered by pool index; after
// the counts changed, the first node scored recomputes an even spread's
// least and most used counts (over the buckets, not the allocations), and
// a bucket's boost is computed once per change of the counts. Scoring a node is therefore a few array reads per
// spread, whatever the number of allocations.
type spreadSet struct {
	rules []*spreadRule
}

// spreadRule is one spread block.
type spreadRule struct {
	attr  target
	share float64 // its weight over the sum of the group's spread weights
	// With targets, the buckets are the target values in order, then one
	// for every other value (and nodes without the attribute): Nomad's
	// implicit target. desired is the count each bucket is meant to hold;
	// 0 for a bucket that is not wanted.
	targets bool
	desired []float64
	index   map[string]int32 // value -> bucket
	missing int32            // even spreads: the bucket of nodes without the attribute; -1 none yet
	counts  []int32
	seen    []bool // even spreads: the values an allocation has been counted on
	anySeen bool
	lo, hi  int32 // even spreads: the least and most used seen buckets...
	stale   bool  // ...unless a count changed since they were computed
	// gen changes with the counts; boost[b] is bucket b's weighted boost
	// while boostGen[b] is gen+1, so a selection computes each bucket's
	// boost once, however many of its nodes it ranks.
	gen      uint32
	boost    []float64
	boostGen []uint32
	node     []int32 // per pool node: its bucket+1; 0 not resolved yet
}

// newSpreadSet gathers tg's and job's spreads; nil when there are none.
func newSpreadSet(job *messages.Job, tg *messages.TaskGroup, poolSize int) *spreadSet {
	blocks := append(append([]*messages.Spread(nil), tg.GetSpreads()...), job.GetSpreads()...)
	var total int32
	for _, b := range blocks {
		total += max(b.GetWeight(), 0)
	}
	set := &spreadSet{}
	for _, b := range blocks {
		if b == nil {
			continue
		}
		share := 1 / float64(len(blocks))
		if total > 0 {
			share = float64(max(b.Weight, 0)) / float64(total)
		}
		set.rules = append(set.rules, newSpreadRule(b, share, float64(tg.Count), poolSize))
	}
	if len(set.rules) == 0 {
		return nil
	}
	return set
}

func newSpreadRule(b *messages.Spread, share, count float64, poolSize int) *spreadRule {
	r := &spreadRule{attr: parseTarget(b.Attribute), share: share, index: map[string]int32{},
		missing: -1, node: make([]int32, poolSize)}
	if len(b.SpreadTarget) == 0 {
		return r
	}
	r.targets = true
	sum := 0.0
	for _, t := range b.SpreadTarget {
		if t == nil {
			continue
		}
		if _, dup := r.index[t.Value]; dup {
			continue
		}
		want := float64(t.Percent) / 100 * count
		r.index[t.Value] = r.newBucket(want)
		sum += want
	}
	others := 0.0
	if sum > 0 && sum < count {
		others = count - sum
	}
	r.newBucket(others) // the implicit target
	return r
}

func (r *spreadRule) newBucket(want float64) int32 {
	r.counts = append(r.counts, 0)
	r.seen = append(r.seen, false)
	r.boost = append(r.boost, 0)
	r.boostGen = append(r.boostGen, 0)
	if r.targets {
		r.desired = append(r.desired, want)
	}
	return int32(len(r.counts) - 1)
}

// bucketOf is node n's bucket. A node without the attribute is a value of
// its own: for an even spread its own bucket, with targets one of the
// untargeted values.
func (r *spreadRule) bucketOf(n *messages.Node) int32 {
	v, ok := r.attr.resolve(n)
	if r.targets {
		if b, hit := r.index[v]; ok && hit {
			return b
		}
		return int32(len(r.counts) - 1)
	}
	if !ok {
		if r.missing < 0 {
			r.missing = r.newBucket(0)
		}
		return r.missing
	}
	b, hit := r.index[v]
	if !hit {
		b = r.newBucket(0)
		r.index[v] = b
	}
	return b
}

// poolBucket is bucketOf for pool node idx, resolved once.
func (r *spreadRule) poolBucket(pool []*messages.Node, idx int) int32 {
	if b := r.node[idx]; b > 0 {
		return b - 1
	}
	b := r.bucketOf(pool[idx])
	r.node[idx] = b + 1
	return b
}

// account adds sign to the counts of the bucket of the allocation's node:
// pool node idx, or node when it is not in the pool.
func (s *spreadSet) account(pool []*messages.Node, idx int, node *messages.Node, sign int32) {
	for _, r := range s.rules {
		var b int32
		if idx >= 0 {
			b = r.poolBucket(pool, idx)
		} else {
			b = r.bucketOf(node)
		}
		r.counts[b] += sign
		r.seen[b] = true
		r.anySeen = true
		r.gen++
		r.stale = true
	}
}

// score is pool node idx's spread score: the sum of each spread's boost
// (in [-1, 1]) times its share of the weights.
func (s *spreadSet) score(pool []*messages.Node, idx int) float64 {
	total := 0.0
	for _, r := range s.rules {
		b := r.poolBucket(pool, idx)
		if r.boostGen[b] != r.gen+1 {
			if r.stale {
				r.bounds()
			}
			if r.targets {
				r.boost[b] = r.share * r.targetBoost(b)
			} else {
				r.boost[b] = r.share * r.evenBoost(b)
			}
			r.boostGen[b] = r.gen + 1
		}
		total += r.boost[b]
	}
	return total
}

// targetBoost is how far bucket b is below what it is meant to hold, one
// more placement included: 1 when empty, 0 once met, negative (at most -1)
// past it; -1 for a value that is not wanted at all.
func (r *spreadRule) targetBoost(b int32) float64 {
	want := r.desired[b]
	if want <= 0 {
		return -1
	}
	return clampUnit((want - float64(r.counts[b]+1)) / want)
}

// evenBoost scores an even spread over the values allocations were counted
// on, as Nomad does: 0 before any was; a value used less than the least
// used one (a new value) is boosted, one used more is penalised in
// proportion; a least used value is boosted by how far the most used one
// is ahead, unless all are level, when any placement unbalances them (-1).
func (r *spreadRule) evenBoost(b int32) float64 {
	if !r.anySeen {
		return 0
	}
	cur, lo, hi := r.counts[b], r.lo, r.hi
	switch {
	case cur != lo && lo == 0:
		return -1
	case cur != lo:
		return clampUnit(float64(lo-cur) / float64(lo))
	case lo == hi:
		return -1
	case lo == 0:
		return 1
	}
	return clampUnit(float64(hi-lo) / float64(lo))
}

// bounds recomputes the least and most used seen buckets.
func (r *spreadRule) bounds() {
	first := true
	for b, c := range r.counts {
		if !r.seen[b] {
			continue
		}
		if first || c < r.lo {
			r.lo = c
		}
		if first || c > r.hi {
			r.hi = c
		}
		first = false
	}
	r.stale = false
}

func clampUnit(x float64) float64 { return min(max(x, -1), 1) }
