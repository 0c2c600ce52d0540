package scheduler

import (
	"github.com/troupe-dev/troupe/messages"
)

// Rolling updates (deployments). A service group with an update block
// (max_parallel > 0) does not replace its allocations of an older job
// version all at once: the plan places at most max_parallel allocations of
// the current version that are not healthy yet, each beside the old one
// whose name it takes, and stops an old allocation only once the new one
// with its name is healthy, so the group never runs fewer healthy
// allocations than before. Placements carry the deployment that tracks
// them: the job version's active one, or a new one this plan creates
// (Process returns it; the actor commits it before the plan). A paused,
// failed or cancelled deployment places nothing more of its version.

// DeploymentSource may be implemented by a Snapshot that stores
// deployments (the state store does). Without it no group rolls.
type DeploymentSource interface {
	DeploymentsByJob(namespace, id string) []*messages.Deployment
}

// rolls reports whether tg's allocations roll (service jobs only).
func (p *planner) rolls(tg *messages.TaskGroup, batch bool) bool {
	_, ok := p.snap.(DeploymentSource)
	return ok && !batch && p.job.Type != jobTypeSystem && tg.GetUpdate().Rolling()
}

// deployment is the deployment of the job's current version: the one
// stored (any status), or the one this plan creates; nil when neither.
func (p *planner) deployment() *messages.Deployment {
	if p.deploy != nil || p.deployLooked {
		return p.deploy
	}
	p.deployLooked = true
	src, _ := p.snap.(DeploymentSource)
	for _, d := range src.DeploymentsByJob(p.job.Namespace, p.job.ID) {
		if d.JobVersion == p.job.Version && d.JobCreateIndex == p.job.CreateIndex {
			p.deploy = d
			break
		}
	}
	return p.deploy
}

// ensureDeployment is the job version's deployment, created (for every
// rolling group of the job) when there is none.
func (p *planner) ensureDeployment() *messages.Deployment {
	if d := p.deployment(); d != nil {
		return d
	}
	now := p.opts.Now
	d := &messages.Deployment{ID: p.opts.NewID(), Namespace: p.job.Namespace, JobID: p.job.ID,
		JobVersion: p.job.Version, JobModifyIndex: p.job.JobModifyIndex, JobSpecModifyIndex: p.job.JobModifyIndex,
		JobCreateIndex: p.job.CreateIndex, Status: messages.DeploymentStatusRunning,
		StatusDescription: messages.DeploymentDescRunning, TaskGroups: map[string]*messages.DeploymentState{},
		CreateTime: now.UnixNano(), ModifyTime: now.UnixNano()}
	if p.job.GetMultiregion() != nil && p.job.GetMultiregionRollout() != "" {
		// Each region waits for its turn in the rollout (actors/deployment
		// multiregion.go): it places nothing until then. A version without
		// a rollout (a revert, which registers a stable version's spec in
		// one region) has no peers to wait for: it deploys in its region
		// alone.
		d.Status, d.StatusDescription = messages.DeploymentStatusPending, messages.DeploymentDescPending
		d.IsMultiregion, d.MultiregionRollout = true, p.job.GetMultiregionRollout()
	}
	for _, tg := range p.job.TaskGroups {
		u := tg.GetUpdate()
		if !u.Rolling() {
			continue
		}
		s := &messages.DeploymentState{AutoRevert: u.AutoRevert, AutoPromote: u.AutoPromote,
			ProgressDeadline: u.ProgressDeadline, DesiredTotal: tg.Count}
		if p.hasOutdated(tg) {
			s.DesiredCanaries = u.Canary
		}
		if u.ProgressDeadline > 0 {
			s.RequireProgressBy = now.UnixNano() + u.ProgressDeadline
		}
		d.TaskGroups[tg.Name] = s
	}
	p.deploy, p.deployNew = d, d
	return d
}

// waitsTurn reports whether the job version's deployment is a multiregion
// region's that waits for its turn (pending): nothing of it is placed.
func (p *planner) waitsTurn() bool {
	return p.deployment().GetStatus() == messages.DeploymentStatusPending
}

// hasOutdated reports whether tg runs allocations of an older version
// that an in-place update cannot bring to the current one (canaries are
// wanted only then: a first version has nothing to compare with).
func (p *planner) hasOutdated(tg *messages.TaskGroup) bool {
	for _, a := range p.jobAllocs {
		if a.TaskGroup == tg.Name && a.JobVersion != p.job.Version && !a.TerminalStatus() && !p.inPlace(tg, a) {
			return true
		}
	}
	return false
}

// canaryPhase reports whether tg waits on canaries: the deployment wants
// some and has not promoted them.
func (p *planner) canaryPhase(tg *messages.TaskGroup) bool {
	if tg.GetUpdate().GetCanary() == 0 {
		return false
	}
	d := p.deployment()
	if d == nil {
		return p.hasOutdated(tg)
	}
	s := d.TaskGroups[tg.Name]
	return s != nil && s.DesiredCanaries > 0 && !s.Promoted
}

// roller is one rolling group's plan.
type roller struct {
	budget   int // new-version placements allowed in this plan
	canaries int // canaries still to place (in the canary phase)
}

// roll leaves one allocation per name in slots, so that the rest of
// reconcile sees the group as it would without a rollout, and says how
// many more new-version allocations may be placed. Of the allocations
// that share a name, the keeper is the one of the current version (or
// one that an in-place update brings to it), else a healthy one, else a
// running one. An old allocation that still serves beside a keeper of the
// current version that is not healthy yet keeps running, out of slots;
// every other one is stopped (the keeper is healthy, or it is an
// intermediate version's that a newer version or a revert left behind).
func (p *planner) roll(tg *messages.TaskGroup, slots []slot) ([]slot, *roller) {
	d := p.deployment()
	if p.job.GetMultiregion() != nil {
		d = p.ensureDeployment() // made now, pending, even with nothing to place yet
	}
	active := d == nil || d.Active() && d.Status != messages.DeploymentStatusPaused && !p.waitsTurn()
	r := &roller{budget: int(tg.Update.MaxParallel)}
	byIndex := map[uint32][]int{}
	var order []uint32
	for i, s := range slots {
		if s.a.JobVersion == p.job.Version && !s.a.DeploymentStatus.HealthSet() && !s.a.ClientTerminalStatus() {
			r.budget--
		}
		if _, ok := byIndex[s.a.Index]; !ok {
			order = append(order, s.a.Index)
		}
		byIndex[s.a.Index] = append(byIndex[s.a.Index], i)
	}
	canaries := p.canaryPhase(tg)
	if canaries {
		r.budget, r.canaries = 0, int(tg.Update.Canary)
		for _, s := range slots {
			if s.a.JobVersion == p.job.Version && s.a.DeploymentStatus.IsCanary() && !s.a.ClientTerminalStatus() {
				r.canaries--
			}
		}
	}
	if !active {
		r.budget, r.canaries = 0, 0
	}
	kept := slots[:0:0]
	for _, idx := range order {
		at := byIndex[idx]
		keep := p.keeper(tg, slots, at)
		if keep < 0 {
			for _, i := range at {
				kept = append(kept, slots[i])
			}
			continue
		}
		k := slots[keep]
		kept = append(kept, k)
		newKeeper := k.a.JobVersion == p.job.Version
		for _, i := range at {
			o := slots[i]
			switch {
			case i == keep:
			case (canaries || !k.a.DeploymentStatus.IsHealthy()) && newKeeper && o.class == slotRun && o.a.JobVersion != p.job.Version:
				// still serving until its replacement is healthy (and,
				// beside a canary, until the canaries are promoted)
			case newKeeper && k.a.DeploymentStatus.IsHealthy():
				p.stop(o.a, descUpdating, "")
			default:
				p.stop(o.a, descNotNeeded, "")
			}
		}
	}
	if !active {
		for i := range kept {
			if kept[i].a.JobVersion == p.job.Version && kept[i].class == slotReschedule {
				kept[i].class = slotFailed // a failed deployment reschedules nothing of its version
			}
		}
	}
	return kept, r
}

// keeper is the position in slots (of those at) of the allocation that
// holds their name, or -1 to leave them all to reconcile (one alone, or
// none running).
func (p *planner) keeper(tg *messages.TaskGroup, slots []slot, at []int) int {
	if len(at) == 1 {
		return -1
	}
	best, rank := -1, 0
	for _, i := range at {
		s := slots[i]
		if s.class != slotRun {
			continue
		}
		r := 1
		switch {
		case s.a.JobVersion == p.job.Version:
			r = 4
		case p.inPlace(tg, s.a):
			r = 3
		case s.a.DeploymentStatus.IsHealthy():
			r = 2
		}
		if r > rank {
			best, rank = i, r
		}
	}
	return best
}

// replace places, budget allowing, the new-version allocation that will
// replace old (old keeps running until it is healthy).
func (r *roller) replace(gp *groupPlan, old *messages.Allocation) {
	if r.canaries > 0 {
		r.canaries--
		gp.places = append(gp.places, placeReq{name: old.Name, index: old.Index, canary: true})
		return
	}
	if r.budget <= 0 {
		return
	}
	r.budget--
	// No PreviousAllocation: old is not replaced in the lineage sense (it
	// keeps running beside the new one until that is healthy).
	gp.places = append(gp.places, placeReq{name: old.Name, index: old.Index})
}

// deploymentOf is the deployment a new allocation of tg joins ("" : none).
func (p *planner) deploymentOf(tg *messages.TaskGroup) string {
	if !p.rolls(tg, p.job.Type == jobTypeBatch) {
		return ""
	}
	d := p.ensureDeployment()
	if !d.Active() {
		return ""
	}
	return d.ID
}
