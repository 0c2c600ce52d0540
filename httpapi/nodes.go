package httpapi

import (
	"net/http"
	"time"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

func (s *Server) nodeList(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, nodeTables, func(snap *state.Snap) (any, error) {
		out := []*api.NodeListStub{}
		for _, n := range snap.Nodes() {
			if matchPrefix(r, n.GetID()) {
				out = append(out, nodeStub(n))
			}
		}
		return paged(w, r, out, nodeOrder)
	})
}

// nodeStub is a node's row in a node list.
func nodeStub(n *messages.Node) *api.NodeListStub {
	return &api.NodeListStub{Address: n.HTTPAddr, ID: n.ID, Datacenter: n.Datacenter,
		Name: n.Name, NodeClass: n.NodeClass, NodePool: n.NodePool, Version: n.Version, Drain: n.Drain,
		SchedulingEligibility: n.SchedulingEligibility, Status: n.Status,
		StatusDescription: n.StatusDescription, Drivers: n.Drivers, NodeResources: fullNodeResources(n.NodeResources),
		ReservedResources: fullReservedResources(n.ReservedResources),
		CreateIndex:       n.CreateIndex, ModifyIndex: n.ModifyIndex}
}

func (s *Server) nodeGet(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, nodeTables, func(snap *state.Snap) (any, error) {
		n := snap.NodeByID(r.PathValue("id"))
		if n == nil {
			return nil, codeErr(http.StatusNotFound, "node not found: %q", r.PathValue("id"))
		}
		return newNodeJSON(n), nil
	})
}

func (s *Server) nodeAllocs(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, allocTables, func(snap *state.Snap) (any, error) {
		if snap.NodeByID(r.PathValue("id")) == nil {
			return nil, codeErr(http.StatusNotFound, "node not found: %q", r.PathValue("id"))
		}
		// Whole allocations with their jobs, as Nomad answers here.
		out := []*allocJSON{}
		for _, a := range snap.AllocsByNode(r.PathValue("id")) {
			out = append(out, newAllocJSON(withJob(snap, a)))
		}
		return filtered(r, out)
	})
}

func (s *Server) nodeEligibility(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	var req api.NodeEligibilityUpdateRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if req.Eligibility != messages.NodeSchedulingEligible && req.Eligibility != messages.NodeSchedulingIneligible {
		return nil, codeErr(http.StatusBadRequest, "invalid Eligibility %q: want \"eligible\" or \"ineligible\"", req.Eligibility)
	}
	id := r.PathValue("id")
	n := s.b.Store().Snapshot().NodeByID(id)
	if n == nil {
		return nil, codeErr(http.StatusNotFound, "node not found: %q", id)
	}
	if n.GetDrain() && req.Eligibility == messages.NodeSchedulingEligible {
		return nil, codeErr(http.StatusBadRequest, "node %q is draining: end the drain (troupe node drain -disable) to make it eligible", id)
	}
	_, index, err := s.apply(r, &messages.Command{Cmd: &messages.Command_UpdateNodeEligibility{
		UpdateNodeEligibility: &messages.UpdateNodeEligibility{NodeID: id, Eligibility: req.Eligibility}}})
	if err != nil {
		return nil, err
	}
	setIndex(w, index)
	return &api.NodeEligibilityUpdateResponse{EvalIDs: []string{}, NodeModifyIndex: index, Index: index}, nil
}

// nodeDrain starts or ends a node's drain; the leader's node actor drives
// it from there (migrations through the scheduler, the deadline).
func (s *Server) nodeDrain(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	var req api.NodeUpdateDrainRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	if s.b.Store().Snapshot().NodeByID(id) == nil {
		return nil, codeErr(http.StatusNotFound, "node not found: %q", id)
	}
	up := &messages.UpdateNodeDrain{NodeID: id, MarkEligible: req.MarkEligible}
	if spec := req.DrainSpec; spec != nil {
		if spec.Deadline < -1 {
			return nil, codeErr(http.StatusBadRequest, "invalid DrainSpec.Deadline %d: want -1 (force now), 0 (none) or a duration", spec.Deadline)
		}
		now := s.b.Now()
		ds := &messages.DrainStrategy{Deadline: spec.Deadline, IgnoreSystemJobs: spec.IgnoreSystemJobs, StartedAt: now.UnixNano()}
		switch {
		case spec.Deadline < 0:
			ds.ForceDeadline = now.UnixNano()
		case spec.Deadline > 0:
			ds.ForceDeadline = now.Add(time.Duration(spec.Deadline)).UnixNano()
		}
		up.DrainStrategy = ds
	}
	_, index, err := s.apply(r, &messages.Command{Cmd: &messages.Command_UpdateNodeDrain{UpdateNodeDrain: up}})
	if err != nil {
		return nil, err
	}
	setIndex(w, index)
	return &api.NodeDrainUpdateResponse{EvalIDs: []string{}, NodeModifyIndex: index, Index: index}, nil
}
