package scheduler

import (
	"slices"
	"time"

	"github.com/troupe-dev/troupe/messages"
)

// Client disconnects, as Nomad handles them. While a node is disconnected
// (it stopped heart-beating and one of its groups has a disconnect window)
// its allocs are "unknown": they may still run, so they are never stopped
// for that, but a group with disconnect.replace gets a replacement for
// each (same name, PreviousAllocation set) placed elsewhere. The original
// and its replacements form a lineage (linked by PreviousAllocation through
// any allocs stopped since) that stands for one name: only its newest
// member holds the slot. When a member that was cut off reports again
// (running or pending on a reachable node), the lineage is reconciled:
// one member survives, chosen by disconnect.reconcile, and the rest are
// stopped. When the window passes the node goes down and its members are
// stopped as lost, without another replacement.

// descReconnected describes the allocs stopped when a lineage is
// reconciled after a reconnect (Nomad's wording).
const descReconnected = "alloc not needed due to disconnected client reconnect"

// disconnect.reconcile values.
const (
	reconcileBestScore       = "best_score"
	reconcileLongestRunning  = "longest_running"
	reconcileKeepOriginal    = "keep_original"
	reconcileKeepReplacement = "keep_replacement"
)

// hasDisconnectWindow reports whether tg's allocs outlive a missed
// heartbeat: disconnect.lost_after, disconnect.stop_on_client_after or the
// older stop_after_client_disconnect (the node actor's window).
func hasDisconnectWindow(tg *messages.TaskGroup) bool {
	d := tg.GetDisconnect()
	return d.GetLostAfter() > 0 || d.GetStopOnClientAfter() > 0 || tg.GetStopAfterClientDisconnect() > 0
}

// replaceOnDisconnect reports whether an alloc of tg that is cut off gets
// a replacement: disconnect.replace, or true for a group that has only the
// older stop_after_client_disconnect.
func replaceOnDisconnect(tg *messages.TaskGroup) bool {
	d := tg.GetDisconnect()
	if d.GetLostAfter() > 0 || d.GetStopOnClientAfter() > 0 {
		return d.GetReplace()
	}
	return tg.GetStopAfterClientDisconnect() > 0
}

// memberState is how a lineage member stands.
type memberState uint8

const (
	memberLive    memberState = iota // reachable, running or pending
	memberUnknown                    // cut off: unknown, or its node disconnected
	memberLost                       // lost, or its node is down or gone
	memberGone                       // failed or completed on its client
)

func (p *planner) memberState(tg *messages.TaskGroup, a *messages.Allocation) memberState {
	switch a.ClientStatus {
	case messages.AllocClientStatusLost:
		return memberLost
	case messages.AllocClientStatusFailed, messages.AllocClientStatusComplete:
		return memberGone
	}
	switch {
	case p.nodeLost(a.NodeID, tg):
		return memberLost
	case p.cutOff(a):
		return memberUnknown
	}
	return memberLive
}

// cutOff reports whether a (on a node that is not lost) is unreachable:
// its status is unknown, or its node is disconnected. An unknown alloc on
// a ready node has reconnected but not reported yet: it still counts as
// cut off until its client says how it is.
func (p *planner) cutOff(a *messages.Allocation) bool {
	return a.ClientStatus == messages.AllocClientStatusUnknown || p.node(a.NodeID).GetStatus() == messages.NodeStatusDisconnected
}

// cutOffClass is the slot class of a cut-off alloc on node n that holds
// its name: replaced while n is disconnected and the group says so, else
// kept as it is (never updated, migrated or stopped for being cut off).
func cutOffClass(tg *messages.TaskGroup, n *messages.Node) slotClass {
	if replaceOnDisconnect(tg) && n.Status == messages.NodeStatusDisconnected {
		return slotDisconnected
	}
	return slotUnknown
}

// lineages is what resolving a group's lineages leaves to the reconciler.
type lineages struct {
	skip   map[string]bool                   // members that hold no slot
	covers map[string][]*messages.Allocation // slot holder ID -> cut-off members it stands for
}

// resolveLineages finds the group's lineages with more than one member
// that the server still wants running, stops the members no longer
// needed, and says which members hold no slot. allocs must be sorted by
// Index (sortedAllocs).
func (p *planner) resolveLineages(tg *messages.TaskGroup, allocs []*messages.Allocation) lineages {
	var lin lineages
	shared := sharedIndexes(allocs)
	if len(shared) == 0 {
		return lin
	}
	// A replacement keeps its predecessor's index, so a lineage lies
	// within the allocs of one shared index.
	var related []*messages.Allocation
	for _, a := range allocs {
		if slices.Contains(shared, a.Index) {
			related = append(related, a)
		}
	}
	fam := newFamily(related)
	for _, root := range fam.roots() {
		if lin.skip == nil {
			lin.skip = map[string]bool{}
			lin.covers = map[string][]*messages.Allocation{}
		}
		p.resolveTree(tg, fam.members(root), fam, &lin)
	}
	return lin
}

// sharedIndexes are the indexes held by more than one alloc the server
// wants running; allocs must be sorted by Index. Without one there is no
// lineage to resolve, and no map is built.
func sharedIndexes(allocs []*messages.Allocation) []uint32 {
	var out []uint32
	var last *messages.Allocation
	for _, a := range allocs {
		if a.ServerTerminalStatus() {
			continue
		}
		if last != nil && last.Index == a.Index && !slices.Contains(out, a.Index) {
			out = append(out, a.Index)
		}
		last = a
	}
	return out
}

// resolveTree settles one lineage (members ancestors first). When a member
// that has a successor is reachable again, one reachable member survives
// and every other is stopped. Otherwise the newest members hold the slot;
// the older ones hold none: lost ones are stopped (their slot is covered,
// so nothing replaces them), finished ones are stopped, cut-off ones wait.
func (p *planner) resolveTree(tg *messages.TaskGroup, members []*messages.Allocation, fam *family, lin *lineages) {
	states := make([]memberState, len(members))
	reconnect := false
	for i, m := range members {
		states[i] = p.memberState(tg, m)
		reconnect = reconnect || (states[i] == memberLive && fam.hasChild(m.ID))
	}
	var winner, leaf *messages.Allocation
	if reconnect {
		winner = p.survivor(tg, members, states)
	}
	var cut []*messages.Allocation
	for i, m := range members {
		switch {
		case m == winner:
		case winner != nil:
			lin.skip[m.ID] = true
			p.stopMember(m, states[i], descReconnected)
		case !fam.hasChild(m.ID):
			// The first leaf stands for the cut-off members; any other
			// leaf is a duplicate that scaleDown stops.
			if leaf == nil {
				leaf = m
			}
		default:
			lin.skip[m.ID] = true
			if states[i] == memberUnknown {
				cut = append(cut, m)
			} else {
				p.stopMember(m, states[i], descReconnected)
			}
		}
	}
	if leaf != nil && len(cut) > 0 {
		lin.covers[leaf.ID] = cut
	}
}

// stopMember stops a member no longer needed: as lost when it is.
func (p *planner) stopMember(a *messages.Allocation, st memberState, desc string) {
	if st == memberLost {
		p.stop(a, descLost, messages.AllocClientStatusLost)
		return
	}
	p.stop(a, desc, "")
}

// survivor picks the member that a reconnected lineage keeps, among the
// reachable ones (members is ancestors first, so the first reachable one is
// the original, the last the newest replacement):
//   - keep_original, keep_replacement: the first, the last;
//   - longest_running: the earliest task StartedAt (ties: the older);
//   - best_score (the default): the original, unless its node is no longer
//     feasible for the group (not ready, ineligible, draining, outside the
//     job's datacenters, or failing a constraint or driver): then the
//     first member whose node is. This stands in for Nomad's comparison
//     of placement scores, which troupe does not keep.
func (p *planner) survivor(tg *messages.TaskGroup, members []*messages.Allocation,
	states []memberState) *messages.Allocation {
	var live []*messages.Allocation
	for i, m := range members {
		if states[i] == memberLive {
			live = append(live, m)
		}
	}
	switch tg.GetDisconnect().GetReconcile() {
	case reconcileKeepOriginal:
		return live[0]
	case reconcileKeepReplacement:
		return live[len(live)-1]
	case reconcileLongestRunning:
		return longestRunning(live)
	}
	feas := newGroupFeas(p.job, tg)
	for _, m := range live {
		if p.nodeFits(&feas, p.node(m.NodeID)) {
			return m
		}
	}
	return live[0]
}

func longestRunning(live []*messages.Allocation) *messages.Allocation {
	best, bestAt := live[0], startedAt(live[0])
	for _, m := range live[1:] {
		if at := startedAt(m); !at.IsZero() && (bestAt.IsZero() || at.Before(bestAt)) {
			best, bestAt = m, at
		}
	}
	return best
}

// startedAt is the earliest StartedAt of a's tasks; zero when none started.
func startedAt(a *messages.Allocation) time.Time {
	var first time.Time
	for _, ts := range a.TaskStates {
		if ts == nil || ts.StartedAt == "" {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, ts.StartedAt); err == nil && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	return first
}

// nodeFits is the static feasibility of n for the group: what admits it
// to the pool and what its constraints and drivers need.
func (p *planner) nodeFits(feas *groupFeas, n *messages.Node) bool {
	return n != nil && n.Status == messages.NodeStatusReady && n.SchedulingEligibility == messages.NodeSchedulingEligible &&
		!n.Drain && inDatacenters(p.job.Datacenters, n.Datacenter) && feas.checkStatic(p.match, n) < 0
}
