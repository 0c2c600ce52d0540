package httpapi

import (
	"cmp"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/actors/deployment"
	"github.com/troupe-dev/troupe/actors/server/evals"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// Deployments, in Nomad's /v1 shapes: reads are blocking queries on the
// deployments table; writes are raft commands on the leader, answered
// with Nomad's DeploymentUpdateResponse. A deployment that is not found
// is a 404, one that is no longer active or cannot be promoted a 400.

var deploymentTables = []string{state.TableDeployments}

func (s *Server) deploymentRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /v1/deployments", s.wrap(s.deploymentList))
	m.HandleFunc("GET /v1/deployment/{id}", s.wrap(s.deploymentGet))
	m.HandleFunc("GET /v1/deployment/allocations/{id}", s.wrap(s.deploymentAllocs))
	for _, method := range []string{"PUT", "POST"} {
		m.HandleFunc(method+" /v1/deployment/promote/{id}", s.wrap(s.deploymentPromote))
		m.HandleFunc(method+" /v1/deployment/fail/{id}", s.wrap(s.deploymentFail))
		m.HandleFunc(method+" /v1/deployment/pause/{id}", s.wrap(s.deploymentPause))
		m.HandleFunc(method+" /v1/deployment/unblock/{id}", s.wrap(s.deploymentUnblock))
		m.HandleFunc(method+" /v1/deployment/allocation-health/{id}", s.wrap(s.deploymentAllocHealth))
		m.HandleFunc(method+" /v1/job/{id}/stable", s.wrap(oneNamespace(s.jobStable)))
	}
	m.HandleFunc("GET /v1/job/{id}/deployments", s.wrap(oneNamespace(s.jobDeployments)))
	m.HandleFunc("GET /v1/job/{id}/deployment", s.wrap(oneNamespace(s.jobDeployment)))
}

func (s *Server) deploymentList(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, deploymentTables, func(snap *state.Snap) (any, error) {
		out := []*messages.Deployment{}
		ns := namespace(r)
		for _, d := range snap.Deployments() {
			if (ns == "*" || d.Namespace == ns) && matchPrefix(r, d.ID) {
				out = append(out, d)
			}
		}
		slices.SortFunc(out, func(a, b *messages.Deployment) int { return cmp.Compare(b.CreateIndex, a.CreateIndex) })
		return filtered(r, out)
	})
}

// findDeployment is a deployment by ID or unique ID prefix.
func findDeployment(snap *state.Snap, id string) (*messages.Deployment, error) {
	if d := snap.DeploymentByID(id); d != nil {
		return d, nil
	}
	var found *messages.Deployment
	for _, d := range snap.Deployments() {
		if id != "" && strings.HasPrefix(d.ID, id) {
			if found != nil {
				return nil, codeErr(http.StatusBadRequest, "deployment prefix %q matches more than one deployment", id)
			}
			found = d
		}
	}
	if found == nil {
		return nil, codeErr(http.StatusNotFound, "deployment not found: %q", id)
	}
	return found, nil
}

func (s *Server) deploymentGet(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, deploymentTables, func(snap *state.Snap) (any, error) {
		return findDeployment(snap, r.PathValue("id"))
	})
}

func (s *Server) deploymentAllocs(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, []string{state.TableDeployments, state.TableAllocs}, func(snap *state.Snap) (any, error) {
		d, err := findDeployment(snap, r.PathValue("id"))
		if err != nil {
			return nil, err
		}
		var in []*messages.Allocation
		for _, a := range snap.AllocsByJob(d.Namespace, d.JobID) {
			if a.DeploymentID == d.ID {
				in = append(in, a)
			}
		}
		return stubs(r, in), nil
	})
}

func (s *Server) jobDeployments(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, deploymentTables, func(snap *state.Snap) (any, error) {
		out := snap.DeploymentsByJob(namespace(r), r.PathValue("id"))
		if out == nil {
			out = []*messages.Deployment{}
		}
		return out, nil
	})
}

// jobDeployment is the job's latest deployment, or null (as Nomad).
func (s *Server) jobDeployment(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, deploymentTables, func(snap *state.Snap) (any, error) {
		if d := snap.LatestDeployment(namespace(r), r.PathValue("id")); d != nil {
			return d, nil
		}
		return nil, nil
	})
}

// deploymentWrite reads the deployment named by the URL on the leader.
func (s *Server) deploymentWrite(w http.ResponseWriter, r *http.Request, body any) (*state.Snap, *messages.Deployment, error) {
	if s.writeToLeader(w, r) {
		return nil, nil, errProxied
	}
	if body != nil {
		if err := decodeBody(r, body); err != nil {
			return nil, nil, err
		}
	}
	snap := s.b.Store().Snapshot()
	d, err := findDeployment(snap, r.PathValue("id"))
	if err != nil {
		return nil, nil, err
	}
	if !d.Active() {
		return nil, nil, codeErr(http.StatusBadRequest, "deployment %q is %s, not active", d.ID, d.Status)
	}
	return snap, d, nil
}

// deploymentEval is the evaluation a deployment write queues.
func (s *Server) deploymentEval(snap *state.Snap, d *messages.Deployment) *messages.Evaluation {
	j := snap.JobByID(d.Namespace, d.JobID)
	if j == nil {
		j = &messages.Job{ID: d.JobID, Namespace: d.Namespace}
	}
	e := s.newEval(j, evals.DeploymentWatcher)
	e.DeploymentID = d.ID
	return e
}

// commitDeployment applies cmd and answers Nomad's update response.
func (s *Server) commitDeployment(w http.ResponseWriter, r *http.Request, cmd *messages.Command, eval *messages.Evaluation) (any, error) {
	_, index, err := s.apply(r, cmd)
	if err != nil {
		return nil, deploymentErr(err)
	}
	setIndex(w, index)
	out := &api.DeploymentUpdateResponse{DeploymentModifyIndex: index, Index: index}
	if eval != nil {
		out.EvalID, out.EvalCreateIndex = eval.ID, index
	}
	return out, nil
}

func deploymentErr(err error) error {
	switch {
	case errors.Is(err, state.ErrDeploymentNotFound), errors.Is(err, state.ErrJobVersionNotFound):
		return codeErr(http.StatusNotFound, "%v", err)
	case errors.Is(err, state.ErrDeploymentNotActive), errors.Is(err, state.ErrDeploymentPromote),
		errors.Is(err, state.ErrDeploymentBadAlloc):
		return codeErr(http.StatusBadRequest, "%v", err)
	}
	return err
}

func (s *Server) deploymentPromote(w http.ResponseWriter, r *http.Request) (any, error) {
	var req api.DeploymentPromoteRequest
	snap, d, err := s.deploymentWrite(w, r, &req)
	if err != nil {
		return nil, err
	}
	if !req.All && len(req.Groups) == 0 {
		req.All = true // Nomad's CLI promotes every group without -group
	}
	for _, g := range req.Groups {
		if _, ok := d.TaskGroups[g]; !ok {
			return nil, codeErr(http.StatusBadRequest, "deployment %q has no task group %q", d.ID, g)
		}
	}
	eval := s.deploymentEval(snap, d)
	cmd := &messages.Command{Cmd: &messages.Command_PromoteDeployment{PromoteDeployment: &messages.PromoteDeployment{
		DeploymentID: d.ID, All: req.All, Groups: req.Groups, Eval: eval}}}
	return s.commitDeployment(w, r, cmd, eval)
}

// deploymentFail marks the deployment failed; a group with auto_revert
// rolls the job back to its latest stable version, as Nomad does.
func (s *Server) deploymentFail(w http.ResponseWriter, r *http.Request) (any, error) {
	snap, d, err := s.deploymentWrite(w, r, nil)
	if err != nil {
		return nil, err
	}
	u := &messages.UpdateDeploymentStatus{DeploymentID: d.ID, Status: messages.DeploymentStatusFailed,
		StatusDescription: messages.DeploymentDescFailedByUser}
	revert := false
	for _, g := range d.TaskGroups {
		revert = revert || g.AutoRevert
	}
	var reverted *uint64
	if revert {
		cur := snap.JobVersion(d.Namespace, d.JobID, d.JobVersion)
		stable := snap.LatestStableVersion(d.Namespace, d.JobID, d.JobVersion)
		switch {
		case stable == nil:
			u.StatusDescription = messages.DeploymentDescNoRollbackTarget(u.StatusDescription)
		case cur != nil && specSame(stable, cur):
			u.StatusDescription = messages.DeploymentDescRollbackNoop(u.StatusDescription, stable.Version)
		default:
			u.StatusDescription = messages.DeploymentDescRollback(u.StatusDescription, stable.Version)
			u.Job = deployment.RevertJob(stable)
			v := stable.Version
			reverted = &v
		}
	}
	u.Eval = s.deploymentEval(snap, d)
	if u.Job != nil {
		u.Eval = s.newEval(u.Job, evals.DeploymentWatcher)
	}
	resp, err := s.commitDeployment(w, r, &messages.Command{Cmd: &messages.Command_UpdateDeploymentStatus{UpdateDeploymentStatus: u}}, u.Eval)
	if out, ok := resp.(*api.DeploymentUpdateResponse); ok {
		out.RevertedJobVersion = reverted
	}
	return resp, err
}

func specSame(a, b *messages.Job) bool {
	return deployment.RevertJob(a).String() == deployment.RevertJob(b).String()
}

func (s *Server) deploymentPause(w http.ResponseWriter, r *http.Request) (any, error) {
	var req api.DeploymentPauseRequest
	snap, d, err := s.deploymentWrite(w, r, &req)
	if err != nil {
		return nil, err
	}
	u := &messages.UpdateDeploymentStatus{DeploymentID: d.ID, Status: messages.DeploymentStatusPaused,
		StatusDescription: messages.DeploymentDescPaused}
	if !req.Pause {
		u.Status, u.StatusDescription = messages.DeploymentStatusRunning, messages.DeploymentDescRunning
		u.Eval = s.deploymentEval(snap, d)
	}
	return s.commitDeployment(w, r, &messages.Command{Cmd: &messages.Command_UpdateDeploymentStatus{UpdateDeploymentStatus: u}}, u.Eval)
}

// deploymentUnblock: only a multiregion deployment blocks, and troupe has
// none, so there is never one to unblock.
func (s *Server) deploymentUnblock(w http.ResponseWriter, r *http.Request) (any, error) {
	_, d, err := s.deploymentWrite(w, r, nil)
	if err != nil {
		return nil, err
	}
	if d.Status != messages.DeploymentStatusBlocked {
		return nil, codeErr(http.StatusBadRequest, "deployment %q is %s, not blocked", d.ID, d.Status)
	}
	u := &messages.UpdateDeploymentStatus{DeploymentID: d.ID, Status: messages.DeploymentStatusSuccessful,
		StatusDescription: messages.DeploymentDescSuccessful}
	return s.commitDeployment(w, r, &messages.Command{Cmd: &messages.Command_UpdateDeploymentStatus{UpdateDeploymentStatus: u}}, nil)
}

func (s *Server) deploymentAllocHealth(w http.ResponseWriter, r *http.Request) (any, error) {
	var req api.DeploymentAllocHealthRequest
	snap, d, err := s.deploymentWrite(w, r, &req)
	if err != nil {
		return nil, err
	}
	if len(req.HealthyAllocationIDs)+len(req.UnhealthyAllocationIDs) == 0 {
		return nil, codeErr(http.StatusBadRequest, "must set the health of at least one allocation")
	}
	eval := s.deploymentEval(snap, d)
	cmd := &messages.Command{Cmd: &messages.Command_SetAllocHealth{SetAllocHealth: &messages.SetAllocHealth{
		DeploymentID: d.ID, HealthyAllocationIDs: req.HealthyAllocationIDs,
		UnhealthyAllocationIDs: req.UnhealthyAllocationIDs, Eval: eval}}}
	return s.commitDeployment(w, r, cmd, eval)
}

func (s *Server) jobStable(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	var req api.JobStabilityRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	if req.JobID != "" && req.JobID != id {
		return nil, codeErr(http.StatusBadRequest, "JobID %q does not match the URL's %q", req.JobID, id)
	}
	cmd := &messages.Command{Cmd: &messages.Command_SetJobStable{SetJobStable: &messages.SetJobStable{
		Namespace: namespace(r), JobID: id, Version: req.JobVersion, Stable: req.Stable}}}
	_, index, err := s.apply(r, cmd)
	if err != nil {
		return nil, deploymentErr(err)
	}
	setIndex(w, index)
	return &api.JobStabilityResponse{Index: index}, nil
}
