package httpapi

import (
	"net/http"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors/server/evals"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

func stubs(r *http.Request, allocs []*messages.Allocation) []*api.AllocListStub {
	out := []*api.AllocListStub{}
	for _, a := range allocs {
		if matchPrefix(r, a.GetID()) {
			out = append(out, api.NewAllocListStub(a))
		}
	}
	return out
}

func (s *Server) allocList(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, allocTables, func(snap *state.Snap) (any, error) {
		var allocs []*messages.Allocation
		for _, a := range snap.Allocs() {
			if inNamespace(r, a.GetNamespace()) {
				allocs = append(allocs, a)
			}
		}
		return paged(w, r, stubs(r, allocs), allocOrder)
	})
}

// allocGet answers an allocation with its job (the version it runs).
func (s *Server) allocGet(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, allocTables, func(snap *state.Snap) (any, error) {
		a := snap.AllocByID(r.PathValue("id"))
		if a == nil {
			return nil, codeErr(http.StatusNotFound, "alloc not found: %q", r.PathValue("id"))
		}
		return newAllocJSON(withJob(snap, a)), nil
	})
}

// withJob is a copy of a with its job (the version it runs) filled in.
func withJob(snap *state.Snap, a *messages.Allocation) *messages.Allocation {
	out := proto.Clone(a).(*messages.Allocation)
	out.Job = snap.JobVersion(a.Namespace, a.JobID, a.JobVersion)
	if out.Job == nil {
		out.Job = snap.JobByID(a.Namespace, a.JobID)
	}
	return out
}

func (s *Server) allocStop(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	snap := s.b.Store().Snapshot()
	a := snap.AllocByID(r.PathValue("id"))
	if a == nil {
		return nil, codeErr(http.StatusNotFound, "alloc not found: %q", r.PathValue("id"))
	}
	j := snap.JobByID(a.Namespace, a.JobID)
	if j == nil {
		j = &messages.Job{ID: a.JobID, Namespace: a.Namespace, Type: "service", Priority: 50}
	}
	eval := s.newEval(j, evals.AllocStop)
	_, index, err := s.apply(r, &messages.Command{Cmd: &messages.Command_StopAlloc{StopAlloc: &messages.StopAlloc{
		AllocID: a.ID, DesiredDescription: "alloc was stopped by an operator", Eval: eval}}})
	if err != nil {
		return nil, err
	}
	setIndex(w, index)
	return &api.AllocStopResponse{EvalID: eval.ID, Index: index}, nil
}

func (s *Server) evalList(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, evalTables, func(snap *state.Snap) (any, error) {
		out := []*messages.Evaluation{}
		for _, e := range snap.Evals() {
			if matchPrefix(r, e.GetID()) && inNamespace(r, e.GetNamespace()) {
				out = append(out, e)
			}
		}
		return paged(w, r, out, evalOrder)
	})
}

func (s *Server) evalGet(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, evalTables, func(snap *state.Snap) (any, error) {
		e := snap.EvalByID(r.PathValue("id"))
		if e == nil {
			return nil, codeErr(http.StatusNotFound, "eval not found: %q", r.PathValue("id"))
		}
		return e, nil
	})
}

func (s *Server) evalAllocs(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, allocTables, func(snap *state.Snap) (any, error) {
		return filtered(r, stubs(r, snap.AllocsByEval(r.PathValue("id"))))
	})
}
