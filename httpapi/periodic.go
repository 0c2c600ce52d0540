package httpapi

import (
	"net/http"

	"github.com/troupe-dev/troupe/actors/server/evals"
	"github.com/troupe-dev/troupe/actors/server/periodic"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// jobPeriodicForce handles PUT|POST /v1/job/:id/periodic/force: launch a
// child of a periodic job now, as its next cron time would (Nomad's
// PeriodicForceResponse). A job that is not an enabled periodic job, or
// a stopped one, is a 400.
func (s *Server) jobPeriodicForce(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) { // read the job where it is current
		return nil, errProxied
	}
	id := r.PathValue("id")
	snap := s.b.Store().Snapshot()
	j := snap.JobByID(namespace(r), id)
	switch {
	case j == nil:
		return nil, codeErr(http.StatusNotFound, "job not found: %q", id)
	case !j.GetPeriodic().GetEnabled():
		return nil, codeErr(http.StatusBadRequest, "job %q is not periodic", id)
	case j.GetStop():
		return nil, codeErr(http.StatusBadRequest, "job %q is stopped", id)
	}
	now := s.b.Now()
	cmd := periodic.LaunchCommand(j, periodic.ForceTime(snap, j, now), now)
	_, index, err := s.apply(r, cmd)
	if err != nil {
		return nil, err
	}
	setIndex(w, index)
	return &api.PeriodicForceResponse{EvalID: cmd.GetRegisterJob().GetEval().GetID(), EvalCreateIndex: index, Index: index}, nil
}

// registerEval is the evaluation a registration of job queues: none for
// an enabled periodic job or a parameterized one, whose children are what
// run (Nomad's rule).
func (s *Server) registerEval(job *messages.Job) *messages.Evaluation {
	if job.IsParent() && !job.GetStop() {
		return nil
	}
	return s.newEval(job, evals.JobRegister)
}

// childrenSummary counts a parent job's children by status.
func childrenSummary(snap *state.Snap, j *messages.Job) *api.JobChildrenSummary {
	out := &api.JobChildrenSummary{}
	for _, c := range snap.ChildJobs(j.GetNamespace(), j.GetID()) {
		switch c.GetStatus() {
		case messages.JobStatusRunning:
			out.Running++
		case messages.JobStatusDead:
			out.Dead++
		default:
			out.Pending++
		}
	}
	return out
}
