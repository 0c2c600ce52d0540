package scheduler

import (
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// JobVersionSource may be implemented by a Snapshot that keeps a job's
// earlier versions (the state store does). Process then updates an
// allocation of an older version in place when its group changed only in
// what does not touch the running tasks (see inPlace); without it, every
// new job version replaces the allocations (a destructive update).
type JobVersionSource interface {
	JobVersion(namespace, id string, version uint64) *messages.Job
}

// versionGroup names a task group of one version of the planned job.
type versionGroup struct {
	version uint64
	group   string
}

// inPlace reports whether alloc a, of an older version of the job, can
// move to the current version where it runs: the job's own settings
// (datacenters, constraints, meta...) and a's group are the same in both
// versions but for the group's Count, ReschedulePolicy and Migrate and the
// job's Priority, which the running tasks never see. Scaling a job does
// not restart the allocations it keeps, as in Nomad. The answer depends
// only on a's version and group, so it is worked out once per pair.
func (p *planner) inPlace(tg *messages.TaskGroup, a *messages.Allocation) bool {
	k := versionGroup{a.GetJobVersion(), tg.GetName()}
	ok, known := p.inPlaceOK[k]
	if !known {
		if p.inPlaceOK == nil {
			p.inPlaceOK = map[versionGroup]bool{}
		}
		ok = p.sameForTasks(tg, k.version)
		p.inPlaceOK[k] = ok
	}
	return ok
}

// sameForTasks reports whether group tg and the job's settings are, to the
// running tasks, the same in the job's version as in the current one.
func (p *planner) sameForTasks(tg *messages.TaskGroup, version uint64) bool {
	src, ok := p.snap.(JobVersionSource)
	if !ok {
		return false
	}
	old := src.JobVersion(p.eval.GetNamespace(), p.eval.GetJobID(), version)
	if old == nil {
		return false
	}
	var oldTG *messages.TaskGroup
	for _, g := range old.GetTaskGroups() {
		if g.GetName() == tg.GetName() {
			oldTG = g
		}
	}
	return oldTG != nil && proto.Equal(jobSettings(old), jobSettings(p.job)) && proto.Equal(groupSpec(oldTG), groupSpec(tg))
}

// jobSettings is the job without its groups and without what the server
// keeps (versions, indexes, status) or the tasks never see (priority).
func jobSettings(j *messages.Job) *messages.Job {
	c := proto.Clone(j).(*messages.Job)
	messages.ClearServerFields(c)
	c.TaskGroups, c.Priority, c.Update = nil, 0, nil
	return c
}

// groupSpec is the group without what an in-place update may change.
func groupSpec(tg *messages.TaskGroup) *messages.TaskGroup {
	c := proto.Clone(tg).(*messages.TaskGroup)
	c.Count, c.ReschedulePolicy, c.Migrate, c.Update = 0, nil, nil, nil
	return c
}

// updateInPlace moves a to the job's current version where it runs: the
// plan places it again under its own ID, keeping its node and resources.
func (p *planner) updateInPlace(a *messages.Allocation) {
	u := cloneAlloc(a)
	u.Job, u.JobVersion, u.EvalID = p.job, p.job.GetVersion(), p.eval.GetID()
	u.ModifyTime = p.opts.Now.UnixNano()
	p.plan.Place = append(p.plan.Place, u)
}
