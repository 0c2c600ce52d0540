package messages

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrBadPlacement is a compact plan whose placement names a common form
// the plan does not have.
var ErrBadPlacement = errors.New("compact plan placement names no common form")

// maxCommons bounds the common forms one compact plan compares a
// placement with (one per task group is the common case).
const maxCommons = 4

// CompactPlan returns the plan as the leader writes it to the raft log:
// Place moved into PlaceCommon and Placed (see their comment). p is not
// changed; the result shares everything but Place with it. A placement
// of a million-allocation run repeats its job, group, evaluation,
// resources, statuses and times: in the log that was two thirds of its
// bytes, and in the FSM two thirds of the objects decoding allocated.
func CompactPlan(p *ApplyPlan) *ApplyPlan {
	if len(p.GetPlace()) == 0 || len(p.GetPlaced()) > 0 {
		return p
	}
	out := &ApplyPlan{EvalID: p.EvalID, Stop: p.Stop, EvalUpdate: p.EvalUpdate, NewEvals: p.NewEvals,
		Preemptions: p.Preemptions, Placed: make([]*PlacedAlloc, 0, len(p.Place))}
	for _, a := range p.Place {
		if !compactable(a) {
			out.Placed = append(out.Placed, &PlacedAlloc{Full: a})
			continue
		}
		ci := -1
		for i, c := range out.PlaceCommon {
			if sameCommon(c, a) {
				ci = i
				break
			}
		}
		if ci < 0 {
			if len(out.PlaceCommon) == maxCommons {
				out.Placed = append(out.Placed, &PlacedAlloc{Full: a})
				continue
			}
			ci = len(out.PlaceCommon)
			out.PlaceCommon = append(out.PlaceCommon, commonOf(a))
		}
		c := out.PlaceCommon[ci]
		if a.Name == "" || (a.Metrics == nil && c.Metrics != nil) {
			// Expanding would fill them in from the common form.
			out.Placed = append(out.Placed, &PlacedAlloc{Full: a})
			continue
		}
		pa := &PlacedAlloc{Common: uint32(ci), ID: a.ID, NodeID: a.NodeID, NodeName: a.NodeName, Index: a.Index,
			PreviousAllocation: a.PreviousAllocation}
		if !derivedName(a.Name, a.JobID, a.TaskGroup, a.Index) {
			pa.Name = a.Name
		}
		if !sameMetrics(c.Metrics, a.Metrics) {
			pa.Metrics = a.Metrics
		}
		out.Placed = append(out.Placed, pa)
	}
	return out
}

// ExpandPlaced turns a compact plan's placements back into Place, in
// order, and clears PlaceCommon and Placed. The allocations share the
// common form's strings and messages (stored allocations are never
// mutated). A plan in the full form is left as it is.
func (p *ApplyPlan) ExpandPlaced() error {
	if len(p.GetPlaced()) == 0 {
		return nil
	}
	place := make([]*Allocation, 0, len(p.Place)+len(p.Placed))
	place = append(place, p.Place...)
	for i, pa := range p.Placed {
		if pa.Full != nil {
			place = append(place, pa.Full)
			continue
		}
		if int(pa.Common) >= len(p.PlaceCommon) || p.PlaceCommon[pa.Common] == nil {
			return fmt.Errorf("%w: placement %d names common form %d of %d", ErrBadPlacement, i, pa.Common, len(p.PlaceCommon))
		}
		place = append(place, expand(p.PlaceCommon[pa.Common], pa))
	}
	p.Place, p.PlaceCommon, p.Placed = place, nil, nil
	return nil
}

// PlacementCount is the number of placements in either form.
func (p *ApplyPlan) PlacementCount() int { return len(p.GetPlace()) + len(p.GetPlaced()) }

// The fields of Allocation by their part in a compact plan; a test fails
// when Allocation gains a field that is in none of these lists.
var (
	// placedFields are each placement's own (PlacedAlloc).
	placedFields = []string{"ID", "NodeID", "NodeName", "Name", "Index", "PreviousAllocation", "Metrics"}
	// commonFields are shared by a run of placements (PlaceCommon).
	commonFields = []string{"Namespace", "EvalID", "JobID", "JobVersion", "TaskGroup", "AllocatedResources",
		"DesiredStatus", "DesiredDescription", "ClientStatus", "ClientDescription", "CreateTime", "ModifyTime",
		"DeploymentID", "Metrics"}
	// fullFields make a placement that sets them travel whole (Full):
	// in-place updates, rescheduled and canary placements.
	fullFields = []string{"Job", "TaskStates", "NextAllocation", "RescheduleTracker", "CreateIndex", "ModifyIndex",
		"AllocModifyIndex", "DesiredTransition", "NetworkStatus", "VolumeStates", "PreemptedAllocations",
		"PreemptedByAllocation", "DeploymentStatus", "ServiceRegistrations"}
)

// compactable reports whether a sets none of fullFields.
func compactable(a *Allocation) bool {
	return a.Job == nil && len(a.TaskStates) == 0 && a.NextAllocation == "" && a.RescheduleTracker == nil &&
		a.CreateIndex == 0 && a.ModifyIndex == 0 && a.AllocModifyIndex == 0 && a.DesiredTransition == nil &&
		a.NetworkStatus == nil && len(a.VolumeStates) == 0 && len(a.PreemptedAllocations) == 0 &&
		a.PreemptedByAllocation == "" && a.DeploymentStatus == nil && a.ServiceRegistrations == nil
}

// commonOf is a's common form.
func commonOf(a *Allocation) *Allocation {
	return &Allocation{Namespace: a.Namespace, EvalID: a.EvalID, JobID: a.JobID, JobVersion: a.JobVersion,
		TaskGroup: a.TaskGroup, AllocatedResources: a.AllocatedResources, DesiredStatus: a.DesiredStatus,
		DesiredDescription: a.DesiredDescription, ClientStatus: a.ClientStatus, ClientDescription: a.ClientDescription,
		CreateTime: a.CreateTime, ModifyTime: a.ModifyTime, DeploymentID: a.DeploymentID, Metrics: a.Metrics}
}

// sameCommon reports whether a's common form is c. Resources compare by
// pointer: the scheduler gives a group's placements one block, and a
// block per placement (ports, devices, cores) has no common form.
func sameCommon(c, a *Allocation) bool {
	return c.AllocatedResources == a.AllocatedResources && c.JobID == a.JobID && c.TaskGroup == a.TaskGroup &&
		c.EvalID == a.EvalID && c.Namespace == a.Namespace && c.JobVersion == a.JobVersion &&
		c.DesiredStatus == a.DesiredStatus && c.DesiredDescription == a.DesiredDescription &&
		c.ClientStatus == a.ClientStatus && c.ClientDescription == a.ClientDescription &&
		c.CreateTime == a.CreateTime && c.ModifyTime == a.ModifyTime && c.DeploymentID == a.DeploymentID
}

// sameMetrics reports whether m says what c does, with no scores.
func sameMetrics(c, m *AllocMetricRef) bool {
	if c == m {
		return true
	}
	return c != nil && m != nil && len(c.ScoreMetaData) == 0 && len(m.ScoreMetaData) == 0 &&
		c.NodesEvaluated == m.NodesEvaluated && c.NodesFiltered == m.NodesFiltered && c.AllocationTime == m.AllocationTime
}

// derivedName reports whether name is Nomad's job.group[index].
func derivedName(name, job, group string, index uint32) bool {
	n := len(job) + 1 + len(group) + 1 // "job.group["
	if len(name) < n+2 || name[:len(job)] != job || name[len(job)] != '.' || name[len(job)+1:n-1] != group ||
		name[n-1] != '[' || name[len(name)-1] != ']' {
		return false
	}
	var buf [10]byte
	return name[n:len(name)-1] == string(strconv.AppendUint(buf[:0], uint64(index), 10))
}

// expand is the placement pa of common form c.
func expand(c *Allocation, pa *PlacedAlloc) *Allocation {
	a := &Allocation{ID: pa.ID, NodeID: pa.NodeID, NodeName: pa.NodeName, Name: pa.Name, Index: pa.Index,
		PreviousAllocation: pa.PreviousAllocation, Metrics: pa.Metrics,
		Namespace: c.Namespace, EvalID: c.EvalID, JobID: c.JobID, JobVersion: c.JobVersion, TaskGroup: c.TaskGroup,
		AllocatedResources: c.AllocatedResources, DesiredStatus: c.DesiredStatus, DesiredDescription: c.DesiredDescription,
		ClientStatus: c.ClientStatus, ClientDescription: c.ClientDescription, CreateTime: c.CreateTime,
		ModifyTime: c.ModifyTime, DeploymentID: c.DeploymentID}
	if a.Metrics == nil {
		a.Metrics = c.Metrics
	}
	if a.Name == "" {
		a.Name = c.JobID + "." + c.TaskGroup + "[" + strconv.FormatUint(uint64(pa.Index), 10) + "]"
	}
	return a
}
