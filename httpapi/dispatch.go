package httpapi

import (
	"errors"
	"net/http"

	"github.com/troupe-dev/troupe/actors/server/dispatch"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/state"
)

// jobDispatch handles PUT|POST /v1/job/:id/dispatch: create a child of a
// parameterized job with the request's payload and meta (Nomad's
// JobDispatchRequest and JobDispatchResponse; the idempotency token is
// the idempotency_token query parameter, as Nomad's client sends it). A
// request that breaks the parent's parameterized block is a 400 and
// creates nothing; a token a child of the job already has answers that
// child.
func (s *Server) jobDispatch(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) { // read the job where it is current
		return nil, errProxied
	}
	var in api.JobDispatchRequest
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	id, ns := r.PathValue("id"), namespace(r)
	req := &dispatch.Request{Payload: in.Payload, Meta: in.Meta, IDPrefixTemplate: in.IdPrefixTemplate,
		IdempotencyToken: r.URL.Query().Get("idempotency_token"), Priority: in.Priority}
	snap := s.b.Store().Snapshot()
	parent := snap.JobByID(ns, id)
	if parent == nil {
		return nil, codeErr(http.StatusNotFound, "job not found: %q", id)
	}
	// Nomad's order: the request is checked, then its token.
	if err := dispatch.Check(parent, req); err != nil {
		return nil, codeErr(http.StatusBadRequest, "%v", err)
	}
	if old := snap.DispatchedChild(ns, id, req.IdempotencyToken); old != nil {
		return s.dispatchedAlready(w, old.GetID(), old.GetCreateIndex(), snap.Index())
	}
	cmd := dispatch.Command(parent, req, s.b.Now())
	res, index, err := s.apply(r, cmd)
	var dup *state.DuplicateDispatchError
	switch {
	case errors.As(err, &dup):
		return s.dispatchedAlready(w, dup.Child.GetID(), dup.Child.GetCreateIndex(), index)
	case errors.Is(err, state.ErrDispatchRefused):
		return nil, codeErr(http.StatusBadRequest, "%v", err)
	case err != nil:
		return nil, err
	}
	setIndex(w, index)
	out := &api.JobDispatchResponse{DispatchedJobID: cmd.GetDispatchJob().GetJob().GetID(),
		EvalID: cmd.GetDispatchJob().GetEval().GetID(), EvalCreateIndex: index, JobCreateIndex: index, Index: index}
	if dr, ok := res.(*state.DispatchJobResult); ok {
		out.DispatchedJobID, out.EvalID = dr.JobID, dr.EvalID
	}
	return out, nil
}

// dispatchedAlready answers a dispatch whose idempotency token a child
// already has: that child, and no evaluation (as Nomad answers).
func (s *Server) dispatchedAlready(w http.ResponseWriter, id string, created, index uint64) (any, error) {
	setIndex(w, index)
	return &api.JobDispatchResponse{DispatchedJobID: id, JobCreateIndex: created, Index: index}, nil
}
