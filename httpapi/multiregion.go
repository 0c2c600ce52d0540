package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	uuid "github.com/hashicorp/go-uuid"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/messages"
)

// multiregionCopyHeader marks the registration of one region's copy of a
// multiregion job, sent by the region that fans it out: the receiving
// region registers it as it is, without fanning out again.
const multiregionCopyHeader = "X-Troupe-Multiregion-Copy"

// multiregionRolloutHeader carries, with a region's copy, the rollout ID
// the fanning-out region gave the registration (Job.MultiregionRollout):
// the regions' deployments of one registration share it.
const multiregionRolloutHeader = "X-Troupe-Multiregion-Rollout"

// registerMultiregion registers a multiregion job in every region it
// names, in the block's order: each region gets its own copy
// (jobspec.ForRegion), this one through raft here, the others through
// forwarding, with the request's token. The answer is this region's
// registration when it is one of them, else the first region's. Every
// region must be known before anything is registered; a region that
// refuses its copy stops the fan-out with its error (the regions before
// it keep theirs).
func (s *Server) registerMultiregion(w http.ResponseWriter, r *http.Request, job *messages.Job, sub *messages.JobSubmission) (*api.JobRegisterResponse, error) {
	regions := jobspec.MultiregionRegions(job)
	known := s.knownRegions()
	for _, name := range regions {
		if !slices.Contains(known, name) {
			return nil, codeErr(http.StatusBadRequest, "multiregion: region %q does not exist: known regions are %s", name, strings.Join(known, ", "))
		}
	}
	if err := s.registrationAllowed(); err != nil {
		return nil, err
	}
	rollout, err := uuid.GenerateUUID()
	if err != nil {
		return nil, err
	}
	var out *api.JobRegisterResponse
	for _, name := range regions {
		cp, _ := jobspec.ForRegion(job, name)
		cp.MultiregionRollout = rollout
		var resp *api.JobRegisterResponse
		var err error
		if name == s.opts.Region {
			resp, err = s.registerLocalCopy(w, r, cp, sub)
		} else {
			resp, err = s.registerRemoteCopy(r, cp, sub)
		}
		if err != nil {
			return nil, fmt.Errorf("multiregion: region %q: %w", name, err)
		}
		if out == nil || name == s.opts.Region {
			out = resp
		}
	}
	return out, nil
}

// knownRegions lists the regions this server can reach, itself included.
func (s *Server) knownRegions() []string {
	if s.opts.Federation == nil {
		return []string{s.opts.Region}
	}
	return s.opts.Federation.Regions()
}

func (s *Server) registerLocalCopy(w http.ResponseWriter, r *http.Request, job *messages.Job, sub *messages.JobSubmission) (*api.JobRegisterResponse, error) {
	if err := s.validateJob(job); err != nil {
		return nil, err
	}
	return s.register(w, r, &messages.RegisterJob{Job: job, Eval: s.registerEval(job), Submission: sub})
}

// registerRemoteCopy sends PUT /v1/jobs with job to a server of its
// region and reads the answer; a refusal there keeps its status code.
func (s *Server) registerRemoteCopy(r *http.Request, job *messages.Job, sub *messages.JobSubmission) (*api.JobRegisterResponse, error) {
	body, err := (&api.JobRegisterRequest{Job: job, Submission: sub}).MarshalJSON()
	if err != nil {
		return nil, err
	}
	q := url.Values{"namespace": {job.GetNamespace()}}
	r = r.Clone(r.Context())
	r.Header = r.Header.Clone()
	r.Header.Set(multiregionRolloutHeader, job.GetMultiregionRollout())
	rec, err := s.askRegion(r, job.GetRegion(), http.MethodPut, "/v1/jobs?"+q.Encode(), body)
	if err != nil {
		return nil, err
	}
	if rec.code != http.StatusOK {
		return nil, codeErr(rec.code, "%s", strings.TrimSpace(rec.body.String()))
	}
	var out api.JobRegisterResponse
	if err := json.Unmarshal(rec.body.Bytes(), &out); err != nil {
		return nil, fmt.Errorf("reading the registration's answer: %w", err)
	}
	return &out, nil
}

// askRegion sends one request, on behalf of r (its token travels), to a
// server of region and keeps the answer; the request is marked as a
// multiregion copy, which the other region does not fan out again.
func (s *Server) askRegion(r *http.Request, region, method, target string, body []byte) (*bufferedResponse, error) {
	if s.opts.Federation == nil {
		return nil, codeErr(http.StatusInternalServerError, "%v %q: this agent knows no other region", ErrNoRegionPath, region)
	}
	h, err := s.opts.Federation.RegionHandler(region)
	if err != nil {
		return nil, codeErr(http.StatusInternalServerError, "%v", err)
	}
	req, err := http.NewRequestWithContext(r.Context(), method, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = r.Header.Clone()
	req.Header.Set(multiregionCopyHeader, s.opts.Region)
	req.Host = r.Host
	rec := &bufferedResponse{header: http.Header{}, code: http.StatusOK}
	h.ServeHTTP(rec, req)
	return rec, nil
}

// bufferedResponse keeps a forwarded request's answer in memory (a
// registration's answer is small).
type bufferedResponse struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header         { return b.header }
func (b *bufferedResponse) WriteHeader(code int)        { b.code = code }
func (b *bufferedResponse) Write(p []byte) (int, error) { return b.body.Write(p) }

// deregisterGlobal, for a stop with ?global=true (Nomad's `job stop
// -global`) of a multiregion job, first stops (or purges, as asked) it in
// the other regions of its block, from the server that was asked (which
// knows them), and marks r so that this region's leader, which the stop
// goes to next, does not do it again. A region where the job is already
// gone counts as done; a single-region job has nothing to do.
func (s *Server) deregisterGlobal(r *http.Request) error {
	if !boolParam(r, "global") || r.Header.Get(multiregionCopyHeader) != "" {
		return nil
	}
	job := s.b.Store().Snapshot().JobByID(namespace(r), r.PathValue("id"))
	if job.GetMultiregion() == nil {
		return nil
	}
	if err := s.deregisterOtherRegions(r, job); err != nil {
		return err
	}
	r.Header.Set(multiregionCopyHeader, s.opts.Region)
	return nil
}

func (s *Server) deregisterOtherRegions(r *http.Request, job *messages.Job) error {
	for _, name := range jobspec.MultiregionRegions(job) {
		if name == s.opts.Region {
			continue
		}
		q := url.Values{"namespace": {job.GetNamespace()}, "purge": {r.URL.Query().Get("purge")}}
		rec, err := s.askRegion(r, name, http.MethodDelete, "/v1/job/"+url.PathEscape(job.GetID())+"?"+q.Encode(), nil)
		if err != nil {
			return fmt.Errorf("multiregion: region %q: %w", name, err)
		}
		if rec.code != http.StatusOK && rec.code != http.StatusNotFound {
			return codeErr(rec.code, "multiregion: region %q: %s", name, strings.TrimSpace(rec.body.String()))
		}
	}
	return nil
}
