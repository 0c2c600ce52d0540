package state

import (
	"slices"

	"github.com/troupe-dev/troupe/messages"
)

// nodeUsage is the resources held by the non-terminal allocations on a
// node, kept up to date on every alloc write so plan checks never scan.
type nodeUsage struct {
	NodeID   string
	CPU      int64
	MemoryMB int64
	DiskMB   int64
	Allocs   int64
	// Cores are the core IDs the allocations' tasks reserve, sorted, one
	// entry per holder. Replaced, never edited: published records share it.
	Cores []uint32
}

// jobSummary counts a job's allocations and evaluations so that the job's
// status is computed without scanning.
type jobSummary struct {
	Namespace  string
	JobID      string
	Allocs     int64 // all allocations
	LiveAllocs int64 // non-terminal allocations
	Evals      int64 // all evaluations
	OpenEvals  int64 // non-terminal evaluations
}

// AllocResources sums the CPU (MHz) and memory (MB) allocated to an
// allocation's tasks, and its shared disk (MB).
func AllocResources(a *messages.Allocation) (cpu, memMB, diskMB int64) {
	for _, t := range a.GetAllocatedResources().GetTasks() {
		cpu += t.GetCpu().GetCpuShares()
		memMB += t.GetMemory().GetMemoryMB()
	}
	return cpu, memMB, a.GetAllocatedResources().GetShared().GetDiskMB()
}

// AllocCores is the core IDs an allocation's tasks reserve (cores = N).
func AllocCores(a *messages.Allocation) []uint32 {
	var out []uint32
	for _, t := range a.GetAllocatedResources().GetTasks() {
		out = append(out, t.GetCpu().GetReservedCores()...)
	}
	return out
}

// changeCores returns held (sorted) with cores added (sign 1) or one
// holder of each taken away (-1), as a new slice.
func changeCores(held, cores []uint32, sign int64) []uint32 {
	out := slices.Clone(held)
	for _, c := range cores {
		i, found := slices.BinarySearch(out, c)
		switch {
		case sign > 0:
			out = slices.Insert(out, i, c)
		case found:
			out = slices.Delete(out, i, i+1)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// NodeCapacity is the node's total CPU, memory and disk minus what it
// reserves.
func NodeCapacity(n *messages.Node) (cpu, memMB, diskMB int64) {
	nr, rr := n.GetNodeResources(), n.GetReservedResources()
	cpu = nr.GetCpu().GetCpuShares() - rr.GetCpu().GetCpuShares()
	memMB = nr.GetMemory().GetMemoryMB() - rr.GetMemory().GetMemoryMB()
	diskMB = nr.GetDisk().GetDiskMB() - rr.GetDisk().GetDiskMB()
	return cpu, memMB, diskMB
}

// fillAllocatedResources derives AllocatedResources from the alloc's job
// when the scheduler did not set them, so that usage accounting (which
// never sees the job again) is exact.
func fillAllocatedResources(a *messages.Allocation) {
	if a.AllocatedResources != nil || a.Job == nil {
		return
	}
	for _, tg := range a.Job.TaskGroups {
		if tg.Name != a.TaskGroup {
			continue
		}
		res := &messages.AllocatedResources{
			Tasks:  map[string]*messages.AllocatedTaskResources{},
			Shared: &messages.AllocatedSharedResources{},
		}
		for _, t := range tg.Tasks {
			res.Tasks[t.Name] = &messages.AllocatedTaskResources{
				Cpu:    &messages.AllocatedCpuResources{CpuShares: int64(t.GetResources().GetCPU())},
				Memory: &messages.AllocatedMemoryResources{MemoryMB: int64(t.GetResources().GetMemoryMB())},
			}
			res.Shared.DiskMB += int64(t.GetResources().GetDiskMB())
		}
		a.AllocatedResources = res
		return
	}
}

// jobStatus derives a job's status the way Nomad does: running while any
// allocation is non-terminal; dead once stopped; system jobs run until
// stopped, and so do periodic and parameterized parents; pending while an evaluation is open; dead once it has had
// allocations or evaluations that are all terminal; pending otherwise.
func jobStatus(j *messages.Job, s *jobSummary) string {
	switch {
	case s.LiveAllocs > 0:
		return messages.JobStatusRunning
	case j.Stop:
		return messages.JobStatusDead
	case j.Type == "system", j.IsParent():
		return messages.JobStatusRunning
	case s.OpenEvals > 0:
		return messages.JobStatusPending
	case s.Allocs > 0 || s.Evals > 0:
		return messages.JobStatusDead
	}
	return messages.JobStatusPending
}
