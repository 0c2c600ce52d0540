package state

import (
	"errors"
	"slices"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/troupe-dev/troupe/messages"
)

// Deployments (Nomad's): one row per rollout of a job version, keyed by
// ID and indexed by job. The counters of each group (placed, healthy,
// unhealthy allocations, placed canaries) are kept exact here, where
// allocations change (putAlloc calls trackDeployment), so that no reader
// walks a job's allocations to count them.

// TableDeployments holds the deployments.
const TableDeployments = "deployments"

// Deployment errors: the Apply response to a deployment command that
// changed nothing.
var (
	ErrDeploymentNotFound  = errors.New("state: deployment not found")
	ErrDeploymentNotActive = errors.New("state: deployment is not active")
	ErrDeploymentBadAlloc  = errors.New("state: allocation is not in the deployment")
	ErrDeploymentPromote   = errors.New("state: deployment cannot be promoted")
	ErrJobVersionNotFound  = errors.New("state: job version not found")
)

func deploymentTable() *memdb.TableSchema {
	d := func(o any) *messages.Deployment { return o.(*messages.Deployment) }
	return table(TableDeployments,
		index(idxID, true, func(o any) []byte { return key1(d(o).ID) }),
		index(idxJob, false, func(o any) []byte { return key2(d(o).Namespace, d(o).JobID) }))
}

// DeploymentByID is one deployment, or nil.
func (s *Snap) DeploymentByID(id string) *messages.Deployment {
	return first[*messages.Deployment](s.txn, TableDeployments, idxID, id)
}

// Deployments are every deployment, by ID.
func (s *Snap) Deployments() []*messages.Deployment {
	return list[*messages.Deployment](s.txn, TableDeployments, idxID)
}

// DeploymentsByJob are a job's deployments, newest first.
func (s *Snap) DeploymentsByJob(ns, id string) []*messages.Deployment {
	out := list[*messages.Deployment](s.txn, TableDeployments, idxJob, ns, id)
	slices.SortFunc(out, func(a, b *messages.Deployment) int {
		switch {
		case a.CreateIndex > b.CreateIndex:
			return -1
		case a.CreateIndex < b.CreateIndex:
			return 1
		}
		return 0
	})
	return out
}

// LatestDeployment is a job's newest deployment, or nil.
func (s *Snap) LatestDeployment(ns, id string) *messages.Deployment {
	if ds := s.DeploymentsByJob(ns, id); len(ds) > 0 {
		return ds[0]
	}
	return nil
}

// ActiveDeployment is a job's active deployment (running, paused, ...),
// or nil.
func (s *Snap) ActiveDeployment(ns, id string) *messages.Deployment {
	for _, d := range s.DeploymentsByJob(ns, id) {
		if d.Active() {
			return d
		}
	}
	return nil
}

// ActiveDeployments are every active deployment.
func (s *Snap) ActiveDeployments() []*messages.Deployment {
	var out []*messages.Deployment
	for _, d := range s.Deployments() {
		if d.Active() {
			out = append(out, d)
		}
	}
	return out
}

// LatestStableVersion is the newest stable version of a job older than
// before, or nil.
func (s *Snap) LatestStableVersion(ns, id string, before uint64) *messages.Job {
	for _, v := range s.JobVersions(ns, id) {
		if v.Version < before && v.Stable {
			return v
		}
	}
	return nil
}

// putDeployment stores d (a new object), keeping the stored one's
// CreateIndex and CreateTime.
func (w *writeTxn) putDeployment(d *messages.Deployment) {
	old := w.read().DeploymentByID(d.ID)
	d.CreateIndex, d.CreateTime = w.index, w.now
	if old != nil {
		d.CreateIndex, d.CreateTime = old.CreateIndex, old.CreateTime
	}
	d.ModifyIndex, d.ModifyTime = w.index, w.now
	w.insert(TableDeployments, d)
	w.changed[TableDeployments] = true
	w.ev.deployment(d.ID)
}

// editDeployment is a writable copy of a stored deployment.
func (w *writeTxn) editDeployment(id string) *messages.Deployment {
	d := w.read().DeploymentByID(id)
	if d == nil {
		return nil
	}
	return cloneDeployment(d)
}

func cloneDeployment(d *messages.Deployment) *messages.Deployment {
	c := shallowCopy(d)
	c.TaskGroups = make(map[string]*messages.DeploymentState, len(d.TaskGroups))
	for g, s := range d.TaskGroups {
		cs := shallowCopy(s)
		cs.PlacedCanaries = slices.Clone(s.PlacedCanaries)
		c.TaskGroups[g] = cs
	}
	return c
}

// setDeploymentStatus moves a deployment to a status; a deployment that
// succeeds makes its job version stable.
func (w *writeTxn) setDeploymentStatus(d *messages.Deployment, status, desc string) {
	d.Status, d.StatusDescription = status, desc
	w.putDeployment(d)
	if status == messages.DeploymentStatusSuccessful {
		w.setJobStable(d.Namespace, d.JobID, d.JobVersion, true)
	}
}

// cancelDeployments cancels the job's active deployments that are not
// for version keep (all of them when keep is nil).
func (w *writeTxn) cancelDeployments(ns, id string, keep *messages.Job, desc string) {
	for _, d := range w.read().DeploymentsByJob(ns, id) {
		if !d.Active() || (keep != nil && d.JobVersion == keep.Version && d.JobCreateIndex == keep.CreateIndex) {
			continue
		}
		c := cloneDeployment(d)
		w.setDeploymentStatus(c, messages.DeploymentStatusCancelled, desc)
	}
}

// setJobStable marks one job version (and the current job, when it is
// that version) stable or not; false when the version is not stored.
func (w *writeTxn) setJobStable(ns, id string, version uint64, stable bool) bool {
	v := w.read().JobVersion(ns, id, version)
	if v == nil {
		return false
	}
	if v.Stable != stable {
		c := copyJob(v)
		c.Stable = stable
		w.insert(tableJobVersions, c)
		w.changed[TableJobs] = true
	}
	if cur := w.read().JobByID(ns, id); cur != nil && cur.Version == version && cur.Stable != stable {
		c := copyJob(cur)
		c.Stable = stable
		w.putJob(c)
	}
	return true
}

// trackDeployment keeps a deployment's counters exact as one of its
// allocations changes (old nil: placed). A failed or lost allocation
// whose health was not yet decided counts as unhealthy, as Nomad's
// client reports it.
func (w *writeTxn) trackDeployment(old, a *messages.Allocation) {
	if a.DeploymentID == "" {
		return
	}
	if !a.DeploymentStatus.HealthSet() && failedClientSide(a) {
		ds := shallowCopy(a.DeploymentStatus)
		if ds == nil {
			ds = &messages.AllocDeploymentStatus{}
		}
		unhealthy := false
		ds.Healthy, ds.Timestamp, ds.ModifyIndex = &unhealthy, w.now, w.index
		a.DeploymentStatus = ds
	}
	placed := old == nil || old.DeploymentID != a.DeploymentID
	healthy := a.DeploymentStatus.IsHealthy() && (placed || !old.DeploymentStatus.IsHealthy())
	unhealthy := a.DeploymentStatus.IsUnhealthy() && (placed || !old.DeploymentStatus.IsUnhealthy())
	if !placed && !healthy && !unhealthy {
		return
	}
	d := w.editDeployment(a.DeploymentID)
	if d == nil {
		return
	}
	s := d.TaskGroups[a.TaskGroup]
	if s == nil {
		return
	}
	if placed {
		s.PlacedAllocs++
		if a.DeploymentStatus.IsCanary() {
			s.PlacedCanaries = append(s.PlacedCanaries, a.ID)
		}
	}
	if healthy {
		s.HealthyAllocs++
		if s.ProgressDeadline > 0 {
			s.RequireProgressBy = w.now + s.ProgressDeadline
		}
	}
	if unhealthy {
		s.UnhealthyAllocs++
	}
	w.putDeployment(d)
}

func failedClientSide(a *messages.Allocation) bool {
	return a.ClientStatus == messages.AllocClientStatusFailed || a.ClientStatus == messages.AllocClientStatusLost
}

// mergeClientHealth takes a client's report of an allocation's health,
// once: a decided health is not changed by a later report.
func mergeClientHealth(a, upd *messages.Allocation) {
	if !upd.GetDeploymentStatus().HealthSet() || a.DeploymentID == "" || a.DeploymentStatus.HealthSet() {
		return
	}
	ds := shallowCopy(a.DeploymentStatus)
	if ds == nil {
		ds = &messages.AllocDeploymentStatus{}
	}
	v := upd.DeploymentStatus.GetHealthy()
	ds.Healthy, ds.Timestamp = &v, upd.DeploymentStatus.Timestamp
	a.DeploymentStatus = ds
}

func (w *writeTxn) restoreDeployments(ds []*messages.Deployment) {
	for _, d := range ds {
		w.insert(TableDeployments, d)
	}
}
