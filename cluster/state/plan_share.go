package state

import (
	"github.com/troupe-dev/troupe/messages"
)

// maxShared bounds the distinct resource blocks one plan's allocations
// are compared with (one per task group is the common case).
const maxShared = 4

// planShare makes the allocations one plan places share what they have in
// common, so that a million stored allocations hold one copy of each
// string and resource block instead of a million: the plan's command
// decodes every allocation into its own strings and messages. Stored
// objects are never mutated (see shallowCopy), so sharing is safe.
//
// It saves about a third of the heap per allocation, and the collector's
// time with it; allocations restored from a snapshot are not shared.
type planShare struct {
	strs map[string]string
	res  []*messages.AllocatedResources
	met  *messages.AllocMetricRef
}

// alloc points a's common fields at the plan's shared values, its node's
// ID and name at n's.
func (s *planShare) alloc(a *messages.Allocation, n *messages.Node) {
	if s.strs == nil {
		s.strs = map[string]string{messages.AllocDesiredStatusRun: messages.AllocDesiredStatusRun, messages.AllocClientStatusPending: messages.AllocClientStatusPending}
	}
	if n != nil && a.NodeID == n.ID {
		a.NodeID = n.ID
		if a.NodeName == n.Name {
			a.NodeName = n.Name
		}
	}
	for _, f := range []*string{&a.Namespace, &a.EvalID, &a.JobID, &a.TaskGroup, &a.DesiredStatus, &a.ClientStatus} {
		*f = s.str(*f)
	}
	a.AllocatedResources = s.resources(a.AllocatedResources)
	a.Metrics = s.metrics(a.Metrics)
}

// metrics returns the plan's last metrics when m says the same and has no
// scores (each placement ranks its own nodes), else m with its score
// names and node IDs shared.
func (s *planShare) metrics(m *messages.AllocMetricRef) *messages.AllocMetricRef {
	if m == nil {
		return nil
	}
	if len(m.ScoreMetaData) > 0 {
		for _, sm := range m.ScoreMetaData {
			sm.NodeID = s.str(sm.NodeID)
			for i, name := range sm.ScoreNames {
				sm.ScoreNames[i] = s.str(name)
			}
		}
		return m
	}
	if c := s.met; c != nil && m.NodesEvaluated == c.NodesEvaluated && m.NodesFiltered == c.NodesFiltered &&
		m.AllocationTime == c.AllocationTime {
		return c
	}
	s.met = m
	return m
}

func (s *planShare) str(v string) string {
	if v == "" {
		return v
	}
	if c, ok := s.strs[v]; ok {
		return c
	}
	s.strs[v] = v
	return v
}

// resources returns a block of the plan equal to r, or r. Blocks with
// networks, devices or reserved cores (ports, device IDs and cores differ
// from one allocation to the next) are not shared.
func (s *planShare) resources(r *messages.AllocatedResources) *messages.AllocatedResources {
	if r == nil || len(r.GetShared().GetNetworks()) > 0 {
		return r
	}
	for i, c := range s.res {
		if c == r || sameResources(c, r) {
			if i > 0 { // the last one matched is tried first
				s.res[0], s.res[i] = s.res[i], s.res[0]
			}
			return c
		}
	}
	if len(s.res) < maxShared {
		s.res = append(s.res, r)
	}
	return r
}

// sameResources reports whether two blocks without networks ask the same
// CPU, memory and disk of the same tasks, and no devices or cores. It is
// proto.Equal for these shapes at a tenth of the cost (TestSameResources
// fails when the messages gain a field it does not compare).
func sameResources(a, b *messages.AllocatedResources) bool {
	if len(a.Tasks) != len(b.Tasks) || a.GetShared().GetDiskMB() != b.GetShared().GetDiskMB() ||
		len(a.GetShared().GetNetworks())+len(b.GetShared().GetNetworks()) > 0 {
		return false
	}
	for name, ta := range a.Tasks {
		tb, ok := b.Tasks[name]
		if !ok || len(ta.GetDevices())+len(tb.GetDevices()) > 0 ||
			len(ta.GetCpu().GetReservedCores())+len(tb.GetCpu().GetReservedCores()) > 0 ||
			ta.GetCpu().GetCpuShares() != tb.GetCpu().GetCpuShares() ||
			ta.GetMemory().GetMemoryMB() != tb.GetMemory().GetMemoryMB() ||
			ta.GetMemory().GetMemoryMaxMB() != tb.GetMemory().GetMemoryMaxMB() ||
			(ta.Cpu == nil) != (tb.Cpu == nil) || (ta.Memory == nil) != (tb.Memory == nil) {
			return false
		}
	}
	return (a.Shared == nil) == (b.Shared == nil)
}
