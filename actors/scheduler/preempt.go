package scheduler

import (
	"cmp"
	"slices"

	"github.com/troupe-dev/troupe/messages"
)

// preemptionPriorityGap is Nomad's rule: a placement may evict only the
// allocations of jobs at least this many priority points below its own.
const preemptionPriorityGap = 10

// victim is an allocation a placement may evict.
type victim struct {
	alloc *messages.Allocation
	prio  int32
	res   resources
}

// sortVictims orders candidates lowest priority first, then by ID, so
// that the choice is deterministic.
func sortVictims(vs []victim) {
	slices.SortFunc(vs, func(a, b victim) int {
		return cmp.Or(cmp.Compare(a.prio, b.prio), cmp.Compare(a.alloc.ID, b.alloc.ID))
	})
}

// preemptCost orders the sets a placement could evict: the lowest total
// priority first, then the fewest evictions.
type preemptCost struct {
	prio  int64
	count int
}

func (c preemptCost) less(o preemptCost) bool {
	return c.prio < o.prio || (c.prio == o.prio && c.count < o.count)
}

func (r resources) dims() [3]int64 { return [3]int64{r.cpu, r.mem, r.disk} }

// short reports whether any dimension of a remaining need is unmet.
func (r resources) short() bool { return r.cpu > 0 || r.mem > 0 || r.disk > 0 }

// reduction scores how well freeing got meets the remaining need rem:
// the fraction of each unmet dimension it covers, summed (higher is
// better), and what it frees beyond the need in those dimensions, as a
// fraction of it (lower is better, so that a victim the size of the need
// wins over a bigger one).
func reduction(rem, got resources) (covered, waste float64) {
	r, g := rem.dims(), got.dims()
	for d := range r {
		if r[d] <= 0 {
			continue
		}
		covered += float64(min(g[d], r[d])) / float64(r[d])
		waste += float64(max(g[d]-r[d], 0)) / float64(r[d])
	}
	return covered, waste
}

// chooseVictims picks from vs (sorted by sortVictims) the allocations to
// evict so that need (what is missing on the node in each dimension; a
// dimension at or below zero needs nothing) is freed, Nomad's way: the
// candidates are taken by priority, lowest first; within a priority the
// one that best reduces what is still missing is picked, again and again,
// until nothing is or the priority has no more; then picks that turned
// out unneeded are dropped, the last picked first. must are evicted in
// any case (they hold a port the placement asks for). It answers the
// indexes of the set, or false when all of vs does not free enough.
func chooseVictims(vs []victim, need resources, must []int) ([]int, bool) {
	taken := make([]bool, len(vs))
	set := slices.Clone(must)
	rem := need
	for _, i := range must {
		taken[i] = true
		rem.add(vs[i].res, -1)
	}
	for start := 0; start < len(vs) && rem.short(); {
		end := start
		for end < len(vs) && vs[end].prio == vs[start].prio {
			end++
		}
		for rem.short() {
			best := pickVictim(vs[start:end], taken[start:end], rem)
			if best < 0 {
				break
			}
			taken[start+best] = true
			set = append(set, start+best)
			rem.add(vs[start+best].res, -1)
		}
		start = end
	}
	if rem.short() {
		return nil, false
	}
	return dropUnneeded(vs, set, len(must), rem), true
}

// pickVictim is the index in group of the untaken victim that best
// reduces rem, or -1 when none frees anything rem needs.
func pickVictim(group []victim, taken []bool, rem resources) int {
	best, bestCov, bestWaste := -1, 0.0, 0.0
	for i := range group {
		if taken[i] {
			continue
		}
		cov, waste := reduction(rem, group[i].res)
		if cov <= 0 {
			continue
		}
		if best < 0 || cov > bestCov || (cov == bestCov && waste < bestWaste) {
			best, bestCov, bestWaste = i, cov, waste
		}
	}
	return best
}

// dropUnneeded removes from set, last picked first (never the first keep
// entries, the must), every victim without which the need is still met;
// rem is the need less everything set frees (at or below zero in every
// dimension).
func dropUnneeded(vs []victim, set []int, keep int, rem resources) []int {
	for k := len(set) - 1; k >= keep; k-- {
		after := rem
		after.add(vs[set[k]].res, 1)
		if after.short() {
			continue
		}
		rem = after
		set = slices.Delete(set, k, k+1)
	}
	return set
}
