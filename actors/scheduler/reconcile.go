package scheduler

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/troupe-dev/troupe/messages"
)

// slotClass says what an existing allocation that holds a name needs.
type slotClass uint8

const (
	slotRun          slotClass = iota // healthy: keep (or update when outdated)
	slotDone                          // batch alloc that completed: keep forever
	slotMigrate                       // on a draining node or marked to migrate
	slotLost                          // its node is down or gone
	slotReschedule                    // failed and due for rescheduling now
	slotFailed                        // failed: rescheduled later, or out of attempts
	slotUnknown                       // cut off from the servers: kept as it is
	slotDisconnected                  // cut off, to be replaced without a stop
)

// removal order when scaling down: lost first, running last.
var removalRank = [...]int{slotLost: 0, slotReschedule: 1, slotFailed: 2,
	slotUnknown: 3, slotDisconnected: 3, slotMigrate: 4, slotRun: 5, slotDone: 6}

type slot struct {
	a     *messages.Allocation
	class slotClass
	later bool // slotFailed that will be due at at
	at    delayed
}

// placeReq is one placement a group needs.
type placeReq struct {
	name       string
	index      uint32
	prev       *messages.Allocation      // the alloc this one replaces
	stopPrev   *messages.AllocStopUpdate // stop of prev, kept only if placed
	reschedule bool
	canary     bool // a deployment's canary (rolling.go)
}

type groupPlan struct {
	places []placeReq
	later  []delayed
}

func allocName(jobID, group string, index uint32) string {
	return jobID + "." + group + "[" + strconv.FormatUint(uint64(index), 10) + "]"
}

// reconcile decides, for one task group of a service or batch job, which
// allocs to stop (applied to the plan at once) and which to place.
func (p *planner) reconcile(tg *messages.TaskGroup, allocs []*messages.Allocation, batch bool) groupPlan {
	lin := p.resolveLineages(tg, allocs)
	var slots []slot
	for _, a := range allocs {
		if lin.skip[a.ID] {
			continue
		}
		if s, ok := p.classify(tg, a, batch); ok {
			slots = append(slots, s)
		}
	}
	var roll *roller
	if p.rolls(tg, batch) {
		slots, roll = p.roll(tg, slots)
	}
	slots = p.scaleDown(slots, int(tg.Count), lin.covers)
	budget := migrateBudget(tg, allocs)
	var gp groupPlan
	used := make(map[uint32]bool, len(slots))
	for _, s := range slots {
		used[s.a.Index] = true
		switch s.class {
		case slotLost:
			p.stop(s.a, descLost, messages.AllocClientStatusLost)
			gp.replace(s.a, nil, false)
		case slotReschedule:
			gp.replace(s.a, stopUpdate(s.a, descRescheduled, ""), true)
		case slotDisconnected:
			// It may still run on the cut-off node: never stopped for this.
			gp.replace(s.a, nil, false)
		case slotMigrate:
			if budget > 0 {
				budget--
				// Stopped only once its replacement is placed: a drain
				// never takes down an allocation that has nowhere to go.
				gp.replace(s.a, stopUpdate(s.a, descMigrating, ""), false)
			}
		case slotFailed:
			if s.later {
				gp.later = append(gp.later, s.at)
			}
		case slotRun:
			switch {
			case s.a.JobVersion == p.job.Version:
			case p.inPlace(tg, s.a):
				p.updateInPlace(s.a)
			case roll != nil:
				roll.replace(&gp, s.a)
			default:
				gp.replace(s.a, stopUpdate(s.a, descUpdating, ""), false)
			}
		}
	}
	missing := int(tg.Count) - len(slots)
	if roll != nil && p.waitsTurn() {
		missing = 0
	}
	for i := uint32(0); missing > 0; i++ {
		if !used[i] {
			gp.places = append(gp.places, placeReq{name: allocName(p.job.ID, tg.Name, i), index: i})
			missing--
		}
	}
	return gp
}

func (gp *groupPlan) replace(prev *messages.Allocation, stop *messages.AllocStopUpdate, resched bool) {
	gp.places = append(gp.places, placeReq{name: prev.Name, index: prev.Index,
		prev: prev, stopPrev: stop, reschedule: resched})
}

// classify sorts an alloc into its slot class; false means it holds no
// name (terminal, or a finished service alloc) and is left alone.
func (p *planner) classify(tg *messages.TaskGroup, a *messages.Allocation, batch bool) (slot, bool) {
	if a.ServerTerminalStatus() { // a batch alloc evicted before it finished is placed again
		return slot{a: a, class: slotDone}, batch && a.ClientStatus == messages.AllocClientStatusComplete && a.DesiredStatus != messages.AllocDesiredStatusEvict
	}
	switch a.ClientStatus {
	case messages.AllocClientStatusComplete:
		return slot{a: a, class: slotDone}, batch
	case messages.AllocClientStatusFailed:
		return p.classifyFailed(tg, a), true
	case messages.AllocClientStatusLost:
		return slot{a: a, class: slotLost}, true
	}
	if p.nodeLost(a.NodeID, tg) {
		return slot{a: a, class: slotLost}, true
	}
	n := p.node(a.NodeID)
	if a.ClientStatus == messages.AllocClientStatusUnknown || n.Status == messages.NodeStatusDisconnected {
		return slot{a: a, class: cutOffClass(tg, n)}, true
	}
	if n.Drain || a.GetDesiredTransition().GetMigrate() {
		return slot{a: a, class: slotMigrate}, true
	}
	return slot{a: a, class: slotRun}, true
}

func (p *planner) classifyFailed(tg *messages.TaskGroup, a *messages.Allocation) slot {
	if a.GetDesiredTransition().GetForceReschedule() {
		return slot{a: a, class: slotReschedule}
	}
	at, ok := rescheduleTime(a, tg.ReschedulePolicy, p.opts.Now)
	switch {
	case !ok:
		return slot{a: a, class: slotFailed}
	case at.Sub(p.opts.Now) <= rescheduleWindow:
		return slot{a: a, class: slotReschedule}
	}
	return slot{a: a, class: slotFailed, later: true, at: delayed{alloc: a, at: at}}
}

// scaleDown stops the slots beyond count: duplicate names first, then
// lost, failed, cut-off, migrating and running allocs, highest index
// first, each with the cut-off members of its lineage. Completed batch
// allocs are never stopped.
func (p *planner) scaleDown(slots []slot, count int, covers map[string][]*messages.Allocation) []slot {
	extra := len(slots) - count
	if extra <= 0 {
		return slots
	}
	type cand struct {
		pos  int
		dup  bool
		rank int
	}
	var cands []cand
	seen := map[uint32]bool{}
	for i, s := range slots {
		dup := seen[s.a.Index]
		seen[s.a.Index] = true
		if s.class != slotDone {
			cands = append(cands, cand{pos: i, dup: dup, rank: removalRank[s.class]})
		}
	}
	slices.SortStableFunc(cands, func(x, y cand) int {
		if x.dup != y.dup {
			return boolFirst(x.dup)
		}
		return cmp.Or(cmp.Compare(x.rank, y.rank),
			cmp.Compare(slots[y.pos].a.Index, slots[x.pos].a.Index))
	})
	drop := map[int]bool{}
	for _, c := range cands[:min(extra, len(cands))] {
		drop[c.pos] = true
		s := slots[c.pos]
		if s.class == slotLost {
			p.stop(s.a, descLost, messages.AllocClientStatusLost)
		} else {
			p.stop(s.a, descNotNeeded, "")
		}
		for _, c := range covers[s.a.ID] {
			p.stop(c, descNotNeeded, "")
		}
	}
	kept := slots[:0:0]
	for i, s := range slots {
		if !drop[i] {
			kept = append(kept, s)
		}
	}
	return kept
}

func boolFirst(x bool) int {
	if x {
		return -1
	}
	return 1
}

// migrateBudget is how many more allocs of tg may start migrating:
// Migrate.MaxParallel (default 1) less the migrations whose replacement is
// not running yet.
func migrateBudget(tg *messages.TaskGroup, allocs []*messages.Allocation) int {
	maxPar := 1
	if tg.Migrate != nil && tg.Migrate.MaxParallel > 0 {
		maxPar = int(tg.Migrate.MaxParallel)
	}
	var byID map[string]*messages.Allocation
	inflight := 0
	for _, a := range allocs {
		if a.PreviousAllocation == "" || a.TerminalStatus() || a.ClientStatus == messages.AllocClientStatusRunning {
			continue
		}
		if byID == nil {
			byID = make(map[string]*messages.Allocation, len(allocs))
			for _, b := range allocs {
				byID[b.ID] = b
			}
		}
		if prev := byID[a.PreviousAllocation]; prev != nil && prev.DesiredDescription == descMigrating {
			inflight++
		}
	}
	return maxPar - inflight
}
