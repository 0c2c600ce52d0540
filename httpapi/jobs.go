package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/troupe-dev/troupe/actors/server/evals"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/messages"
)

var (
	jobTables   = []string{"jobs"}
	allocTables = []string{"allocs"}
	evalTables  = []string{"evals"}
	nodeTables  = []string{"nodes"}
)

// jobRegister handles PUT /v1/jobs: decode, canonicalize, validate, then
// one raft command carrying the job and its evaluation.
func (s *Server) jobRegister(w http.ResponseWriter, r *http.Request) (any, error) {
	var extra struct {
		EnforceIndex   bool
		JobModifyIndex uint64
		Submission     *messages.JobSubmission
	}
	job, err := s.readJob(r, &extra)
	if err != nil {
		return nil, err
	}
	if err := aclCheckJobMounts(r, job); err != nil {
		return nil, err
	}
	if job.GetMultiregion() != nil && r.Header.Get(multiregionCopyHeader) != "" {
		job.MultiregionRollout = r.Header.Get(multiregionRolloutHeader) // the fanning-out region's
	}
	if job.GetMultiregion() != nil && r.Header.Get(multiregionCopyHeader) == "" {
		if extra.EnforceIndex {
			return nil, codeErr(http.StatusBadRequest, "EnforceIndex is not supported for a multiregion job yet")
		}
		return s.registerMultiregion(w, r, job, extra.Submission)
	}
	return s.register(w, r, &messages.RegisterJob{Job: job, Eval: s.registerEval(job),
		EnforceIndex: extra.EnforceIndex, JobModifyIndex: extra.JobModifyIndex, Submission: extra.Submission})
}

// register commits a RegisterJob command and answers as Nomad does. A
// submission over Nomad's size limit is dropped with a warning.
func (s *Server) register(w http.ResponseWriter, r *http.Request, cmd *messages.RegisterJob) (*api.JobRegisterResponse, error) {
	if err := s.registrationAllowed(); err != nil {
		return nil, err
	}
	var dropped string
	cmd.Submission, dropped = keepSubmission(cmd.GetSubmission())
	resp, index, err := s.apply(r, &messages.Command{Cmd: &messages.Command_RegisterJob{RegisterJob: cmd}})
	if err != nil {
		return nil, namespaceRefused(err)
	}
	out := &api.JobRegisterResponse{EvalID: cmd.GetEval().GetID(), EvalCreateIndex: index, JobModifyIndex: index, Index: index,
		Warnings: s.jobWarnings(cmd.GetJob(), dropped)}
	if res, ok := resp.(*state.RegisterJobResult); ok {
		out.JobModifyIndex, out.EvalID = res.JobModifyIndex, res.EvalID
	}
	setIndex(w, index)
	return out, nil
}

// readJob reads the job of a register or plan request (a job, or Nomad's
// {"Job": ...} with extra fields, which go into extra), checks that it is
// the URL's job when the URL names one, and canonicalizes and validates
// it against the server's limits, region and namespaces. Every problem is
// a 400 that names it.
func (s *Server) readJob(r *http.Request, extra any) (*messages.Job, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	job, err := jobspec.ParseJSON(body)
	if err != nil {
		return nil, codeErr(http.StatusBadRequest, "%v", err)
	}
	if job == nil {
		return nil, codeErr(http.StatusBadRequest, "missing job")
	}
	if id := r.PathValue("id"); id != "" && id != job.GetID() {
		return nil, codeErr(http.StatusBadRequest, "job ID %q does not match the URL's %q", job.GetID(), id)
	}
	if err := json.Unmarshal(body, extra); err != nil { // ParseJSON read the job already
		return nil, codeErr(http.StatusBadRequest, "invalid request body: %v", err)
	}
	if job.Region == "" {
		job.Region = s.opts.Region // a job file without a region runs here
	}
	job.Namespace = requestNamespace(r, job.Namespace)
	if err := aclCheckNs(r, job.Namespace); err != nil {
		return nil, err
	}
	jobspec.Canonicalize(job)
	if err := s.validateJob(job); err != nil {
		return nil, err
	}
	return job, nil
}

// validateJob checks a job that is about to be registered: jobspec's
// rules under this server's limits, and a region, namespace and node
// pool that exist here.
func (s *Server) validateJob(job *messages.Job) error {
	if err := jobspec.ValidateLimits(job, s.opts.Limits); err != nil {
		return codeErr(http.StatusBadRequest, "%v", err)
	}
	if job.GetRegion() != s.opts.Region {
		return codeErr(http.StatusBadRequest, "region %q does not exist: this cluster's region is %q", job.GetRegion(), s.opts.Region)
	}
	if err := s.checkNamespace("job "+quote(job.GetID()), job.GetNamespace()); err != nil {
		return err
	}
	return s.checkJobPool(job)
}

func (s *Server) newEval(job *messages.Job, trigger evals.Trigger) *messages.Evaluation {
	return evals.ForJob(job, trigger, s.b.Now())
}

// jobParse handles POST /v1/jobs/parse: HCL in, the job's JSON out.
func (s *Server) jobParse(w http.ResponseWriter, r *http.Request) (any, error) {
	var req api.JobsParseRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.JobHCL) == "" {
		return nil, codeErr(http.StatusBadRequest, "JobHCL is empty")
	}
	// hcl's parser takes hundreds of bytes of memory per byte of input:
	// a few parses at a time, however many requests come.
	select {
	case s.hclSlots <- struct{}{}:
		defer func() { <-s.hclSlots }()
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	job, err := jobspec.ParseWithVariables("job.hcl", []byte(req.JobHCL),
		jobspec.Variables{Flags: req.VariableFlags, File: req.Variables})
	if err != nil {
		return nil, codeErr(http.StatusBadRequest, "%v", err)
	}
	if req.Canonicalize {
		if job.Region == "" {
			job.Region = s.opts.Region // as registering it here would
		}
		jobspec.Canonicalize(job)
	}
	// The response writer keeps every zero value (count = 0 stays 0 when
	// the job comes back to PUT /v1/jobs).
	return job, nil
}

func (s *Server) jobList(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, []string{"jobs", "allocs", "evals"}, func(snap *state.Snap) (any, error) {
		out := []*api.JobListStub{}
		for _, j := range snap.Jobs() {
			if matchPrefix(r, j.GetID()) && inNamespace(r, j.GetNamespace()) {
				out = append(out, jobStub(snap, j))
			}
		}
		return paged(w, r, out, jobOrder)
	})
}

// jobStub is a job's row in a job list.
func jobStub(snap *state.Snap, j *messages.Job) *api.JobListStub {
	return &api.JobListStub{ID: j.ID, ParentID: j.ParentID, Periodic: j.GetPeriodic().GetEnabled(), ParameterizedJob: j.IsParameterized(), Name: j.Name, Namespace: j.Namespace,
		Datacenters: j.Datacenters, NodePool: state.PoolOrDefault(j.NodePool), Type: j.Type, Priority: int(j.Priority),
		Stop: j.Stop, Status: j.Status, StatusDescription: j.StatusDescription, JobSummary: summary(snap, j),
		CreateIndex: j.CreateIndex, ModifyIndex: j.ModifyIndex, JobModifyIndex: j.JobModifyIndex,
		SubmitTime: j.SubmitTime, Version: j.Version, Meta: j.Meta}
}

func (s *Server) jobGet(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, jobTables, func(snap *state.Snap) (any, error) {
		j := snap.JobByID(namespace(r), r.PathValue("id"))
		if j == nil {
			return nil, codeErr(http.StatusNotFound, "job not found: %q", r.PathValue("id"))
		}
		return j, nil
	})
}

func (s *Server) jobDeregister(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.deregisterGlobal(r); err != nil {
		return nil, err
	}
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	id, ns := r.PathValue("id"), namespace(r)
	j := s.b.Store().Snapshot().JobByID(ns, id)
	if j == nil {
		return nil, codeErr(http.StatusNotFound, "job not found: %q", id)
	}
	eval := s.newEval(j, evals.JobDeregister)
	resp, index, err := s.apply(r, &messages.Command{Cmd: &messages.Command_DeregisterJob{
		DeregisterJob: &messages.DeregisterJob{Namespace: ns, JobID: id, Purge: boolParam(r, "purge"), Eval: eval}}})
	if err != nil {
		if errors.Is(err, state.ErrJobNotFound) {
			return nil, codeErr(http.StatusNotFound, "job not found: %q", id)
		}
		return nil, err
	}
	out := &api.JobDeregisterResponse{EvalID: eval.ID, EvalCreateIndex: index, JobModifyIndex: index, Index: index}
	if res, ok := resp.(*state.DeregisterJobResult); ok {
		out.JobModifyIndex = res.JobModifyIndex
	}
	setIndex(w, index)
	return out, nil
}

func (s *Server) jobAllocs(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, allocTables, func(snap *state.Snap) (any, error) {
		out := []*api.AllocListStub{}
		for _, a := range snap.AllocsByJob(namespace(r), r.PathValue("id")) {
			out = append(out, api.NewAllocListStub(a))
		}
		return filtered(r, out)
	})
}

func (s *Server) jobEvals(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, evalTables, func(snap *state.Snap) (any, error) {
		out := snap.EvalsByJob(namespace(r), r.PathValue("id"))
		if out == nil {
			out = []*messages.Evaluation{}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].CreateIndex > out[j].CreateIndex })
		return filtered(r, out)
	})
}

func (s *Server) jobSummary(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, []string{"jobs", "allocs", "evals"}, func(snap *state.Snap) (any, error) {
		j := snap.JobByID(namespace(r), r.PathValue("id"))
		if j == nil {
			return nil, codeErr(http.StatusNotFound, "job not found: %q", r.PathValue("id"))
		}
		return summary(snap, j), nil
	})
}

// summary counts a job's allocations per group and client status; a
// group's Queued are the allocations its newest scheduled evaluation
// could not place (Nomad's QueuedAllocations).
func summary(snap *state.Snap, j *messages.Job) *api.JobSummary {
	out := &api.JobSummary{JobID: j.ID, Namespace: j.Namespace, Summary: map[string]api.TaskGroupSummary{},
		CreateIndex: j.CreateIndex, ModifyIndex: j.ModifyIndex}
	if j.GetPeriodic() != nil || j.IsParameterized() {
		out.Children = childrenSummary(snap, j)
	}
	queued := queuedAllocs(snap, j)
	for _, g := range j.TaskGroups {
		out.Summary[g.Name] = api.TaskGroupSummary{Queued: int(queued[g.Name])}
	}
	for _, a := range snap.AllocsByJob(j.Namespace, j.ID) {
		sum := out.Summary[a.TaskGroup]
		switch a.ClientStatus {
		case messages.AllocClientStatusPending:
			sum.Starting++
		case messages.AllocClientStatusRunning:
			sum.Running++
		case messages.AllocClientStatusComplete:
			sum.Complete++
		case messages.AllocClientStatusFailed:
			sum.Failed++
		case messages.AllocClientStatusLost:
			sum.Lost++
		default:
			sum.Unknown++
		}
		out.Summary[a.TaskGroup] = sum
	}
	return out
}

// queuedAllocs are the QueuedAllocations of the job's newest evaluation
// that has them (the scheduler sets them on every evaluation it
// completes; a blocked one waits without).
func queuedAllocs(snap *state.Snap, j *messages.Job) map[string]int32 {
	var newest *messages.Evaluation
	for _, e := range snap.EvalsByJob(j.Namespace, j.ID) {
		if e.QueuedAllocations != nil && (newest == nil || e.ModifyIndex > newest.ModifyIndex) {
			newest = e
		}
	}
	return newest.GetQueuedAllocations()
}
