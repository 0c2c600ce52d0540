package httpapi

import (
	"net/http"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/jobdiff"
	"github.com/troupe-dev/troupe/messages"
)

// jobVersions handles GET /v1/job/{id}/versions[?diffs=true]: the stored
// versions of the job, newest first, and with diffs each one's difference
// from the version before it (Diffs[i] is Versions[i+1] -> Versions[i]).
func (s *Server) jobVersions(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, jobTables, func(snap *state.Snap) (any, error) {
		versions := snap.JobVersions(namespace(r), r.PathValue("id"))
		if len(versions) == 0 {
			return nil, codeErr(http.StatusNotFound, "job not found: %q", r.PathValue("id"))
		}
		out := &api.JobVersionsResponse{Versions: versions}
		if boolParam(r, "diffs") {
			out.Diffs = []*jobdiff.JobDiff{}
			for i := 0; i+1 < len(versions); i++ {
				out.Diffs = append(out.Diffs, jobdiff.Diff(versions[i+1], versions[i]))
			}
		}
		return out, nil
	})
}

// jobRevert handles PUT /v1/job/{id}/revert on the leader (a follower
// passes it on): the spec of a stored version is registered again, as a
// new version, enforcing the current job modify index (a change that
// lands meanwhile makes it a 409). EnforcePriorVersion, when given, must
// be the current version. As in Nomad, reverting a stopped job to a
// version that ran runs it again. The new version keeps the reverted-to
// version's submission.
func (s *Server) jobRevert(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	var req api.JobRevertRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	id, ns := r.PathValue("id"), namespace(r)
	if req.JobID != "" && req.JobID != id {
		return nil, codeErr(http.StatusBadRequest, "JobID %q does not match the URL's %q", req.JobID, id)
	}
	snap := s.b.Store().Snapshot()
	current := snap.JobByID(ns, id)
	if current == nil {
		return nil, codeErr(http.StatusNotFound, "job not found: %q", id)
	}
	switch {
	case req.EnforcePriorVersion != nil && *req.EnforcePriorVersion != current.GetVersion():
		return nil, codeErr(http.StatusConflict, "job %q is at version %d, not the enforced prior version %d",
			id, current.GetVersion(), *req.EnforcePriorVersion)
	case req.JobVersion == current.GetVersion():
		return nil, codeErr(http.StatusBadRequest, "job %q is already at version %d", id, req.JobVersion)
	}
	target := snap.JobVersion(ns, id, req.JobVersion)
	if target == nil {
		return nil, codeErr(http.StatusNotFound, "job %q has no stored version %d (versions kept: %s)",
			id, req.JobVersion, versionList(snap.JobVersions(ns, id)))
	}
	job := proto.Clone(target).(*messages.Job)
	if err := aclCheckJobMounts(r, job); err != nil {
		return nil, err // the reverting token mounts the version's volumes
	}
	var sub *messages.JobSubmission // the new version keeps the source of the one it reverts to
	if old := snap.JobSubmission(ns, id, req.JobVersion); old != nil {
		sub = proto.Clone(old).(*messages.JobSubmission)
	}
	return s.register(w, r, &messages.RegisterJob{Job: job, Eval: s.registerEval(job),
		EnforceIndex: true, JobModifyIndex: current.GetJobModifyIndex(), Submission: sub})
}

// versionList names versions for an error message: "3, 2, 1".
func versionList(versions []*messages.Job) string {
	out := ""
	for i, v := range versions {
		if i > 0 {
			out += ", "
		}
		out += strconv.FormatUint(v.GetVersion(), 10)
	}
	return out
}
