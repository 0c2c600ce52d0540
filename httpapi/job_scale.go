package httpapi

import (
	"net/http"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors/server/evals"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// jobScale handles PUT /v1/job/{id}/scale on the leader (a follower
// passes it on): the stored job with one group's count changed is
// registered again (a new version, through raft, with a "job-scaling"
// evaluation), enforcing the job modify index it was read at. The group
// may be left out of a job that has only one. Running allocations are
// kept: the scheduler updates them in place.
func (s *Server) jobScale(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) { // read the job where it is current
		return nil, errProxied
	}
	var req api.ScalingRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	if t := req.Target["Job"]; t != "" && t != id {
		return nil, codeErr(http.StatusBadRequest, "Target.Job %q does not match the URL's %q", t, id)
	}
	stored := s.b.Store().Snapshot().JobByID(namespace(r), id)
	if stored == nil {
		return nil, codeErr(http.StatusNotFound, "job not found: %q", id)
	}
	job := proto.Clone(stored).(*messages.Job)
	tg, err := scaledGroup(job, req)
	if err != nil {
		return nil, err
	}
	tg.Count = int32(*req.Count)
	if err := s.checkJobCount(job); err != nil {
		return nil, err
	}
	// The job as read here, and nothing newer, is what gets a new count:
	// a `job run` committed meanwhile makes this a 409, not a silent revert.
	index := req.JobModifyIndex
	if index == 0 {
		index = stored.GetJobModifyIndex()
	}
	return s.register(w, r, &messages.RegisterJob{Job: job, Eval: s.newEval(job, evals.JobScaling),
		EnforceIndex: true, JobModifyIndex: index})
}

// scaledGroup checks a scaling request against job and returns the group
// it scales.
func scaledGroup(job *messages.Job, req api.ScalingRequest) (*messages.TaskGroup, error) {
	switch {
	case req.Error || req.Count == nil:
		return nil, codeErr(http.StatusBadRequest, "Count is required (troupe keeps no scaling events)")
	case *req.Count < 0 || *req.Count > 1<<31-1:
		return nil, codeErr(http.StatusBadRequest, "Count %d is out of range (0 or more)", *req.Count)
	case job.GetStop():
		return nil, codeErr(http.StatusBadRequest, "job %q is stopped: run it again to scale it", job.GetID())
	case job.GetType() == "system" || job.GetType() == "sysbatch":
		return nil, codeErr(http.StatusBadRequest, "job %q is a %s job: it runs one allocation per node", job.GetID(), job.GetType())
	}
	name := req.Target["Group"]
	if name == "" && len(job.GetTaskGroups()) == 1 {
		name = job.GetTaskGroups()[0].GetName()
	}
	i := slices.IndexFunc(job.GetTaskGroups(), func(g *messages.TaskGroup) bool { return g.GetName() == name })
	switch {
	case name == "":
		return nil, codeErr(http.StatusBadRequest, "Target.Group is required: job %q has %d groups", job.GetID(), len(job.GetTaskGroups()))
	case i < 0:
		return nil, codeErr(http.StatusNotFound, "job %q has no group %q", job.GetID(), name)
	}
	return job.GetTaskGroups()[i], nil
}

// jobScaleStatus handles GET /v1/job/{id}/scale: each group's desired,
// placed and running counts. troupe has no deployments, so Healthy and
// Unhealthy stay 0.
func (s *Server) jobScaleStatus(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, []string{"jobs", "allocs"}, func(snap *state.Snap) (any, error) {
		job := snap.JobByID(namespace(r), r.PathValue("id"))
		if job == nil {
			return nil, codeErr(http.StatusNotFound, "job not found: %q", r.PathValue("id"))
		}
		out := &api.JobScaleStatusResponse{JobID: job.GetID(), Namespace: job.GetNamespace(),
			JobCreateIndex: job.GetCreateIndex(), JobModifyIndex: job.GetJobModifyIndex(), JobStopped: job.GetStop(),
			TaskGroups: map[string]api.TaskGroupScaleStatus{}}
		for _, tg := range job.GetTaskGroups() {
			out.TaskGroups[tg.GetName()] = api.TaskGroupScaleStatus{Desired: int(tg.GetCount())}
		}
		for _, a := range snap.AllocsByJob(job.GetNamespace(), job.GetID()) {
			st, ok := out.TaskGroups[a.GetTaskGroup()]
			if !ok || a.TerminalStatus() {
				continue
			}
			st.Placed++
			if a.GetClientStatus() == messages.AllocClientStatusRunning {
				st.Running++
			}
			out.TaskGroups[a.GetTaskGroup()] = st
		}
		return out, nil
	})
}

// checkJobCount refuses a scaled job whose groups' counts add up past
// job_max_count. The rest of the stored job is not checked again: it was
// valid when it was registered (an older rule must not stop a scale).
func (s *Server) checkJobCount(job *messages.Job) error {
	var total int64
	for _, tg := range job.GetTaskGroups() {
		total += int64(tg.GetCount())
	}
	if limit := s.opts.Limits.WithDefaults().JobMaxCount; total > int64(limit) {
		return codeErr(http.StatusBadRequest, "the groups' counts would add up to %d allocations, over the job_max_count limit of %d", total, limit)
	}
	return nil
}
