package httpapi

import (
	"net/http"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors/scheduler"
	"github.com/troupe-dev/troupe/actors/server/evals"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/jobdiff"
	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/messages"
)

// jobPlan handles PUT /v1/job/{id}/plan: the scheduler's dry run of the
// job as given against the leader's state (a follower passes the request
// on), with the difference to the stored job on request. It changes
// nothing: no raft command, no evaluation.
func (s *Server) jobPlan(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	var req struct{ Diff bool }
	job, err := s.readJob(r, &req)
	if err != nil {
		return nil, err
	}
	if cp, ok := jobspec.ForRegion(job, s.opts.Region); ok {
		job = cp // a multiregion job plans this region's copy
	}
	snap := s.b.Store().Snapshot()
	old := snap.JobByID(job.GetNamespace(), job.GetID())
	now := s.b.Now()
	stored := state.Registered(old, proto.Clone(job).(*messages.Job), snap.Index()+1, now.UnixNano())
	eval := evals.ForJob(stored, evals.JobRegister, now)
	eval.JobModifyIndex = stored.GetJobModifyIndex()
	res, err := scheduler.DryRun(snap, stored, eval, scheduler.Options{Now: now})
	if err != nil {
		return nil, err
	}
	out := &api.JobPlanResponse{JobModifyIndex: old.GetJobModifyIndex(), CreatedEvals: res.Plan.GetNewEvals(),
		FailedTGAllocs: res.Failed, Warnings: s.jobWarnings(job), Annotations: &api.PlanAnnotations{
			DesiredTGUpdates: map[string]*api.DesiredUpdates{}, PreemptedAllocs: preemptedStubs(snap, res.Plan)}}
	for name, u := range res.Updates {
		out.Annotations.DesiredTGUpdates[name] = (*api.DesiredUpdates)(u) // the same fields
	}
	if req.Diff {
		out.Diff = jobdiff.Diff(old, job)
		annotate(out.Diff, out.Annotations.DesiredTGUpdates)
	}
	setIndex(w, snap.Index())
	return out, nil
}

// annotate puts each group's counts into its diff as Nomad's Updates
// ("create", "destroy", ...); a group the diff leaves out because its
// spec did not change is added, unchanged, when the plan touches it.
func annotate(d *jobdiff.JobDiff, updates map[string]*api.DesiredUpdates) {
	byName := map[string]*jobdiff.TaskGroupDiff{}
	for _, g := range d.TaskGroups {
		byName[g.Name] = g
	}
	for name, u := range updates {
		counts := map[string]uint64{}
		for k, v := range map[string]uint64{"ignore": u.Ignore, "create": u.Place, "destroy": u.Stop,
			"migrate": u.Migrate, "in-place update": u.InPlaceUpdate, "create/destroy update": u.DestructiveUpdate,
			"canary": u.Canary} {
			if v > 0 {
				counts[k] = v
			}
		}
		if len(counts) == 0 {
			continue
		}
		g := byName[name]
		if g == nil {
			g = &jobdiff.TaskGroupDiff{Type: "None", Name: name}
			d.TaskGroups = append(d.TaskGroups, g)
		}
		g.Updates = counts
	}
}
