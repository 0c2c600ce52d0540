package cgroups

import (
	"time"

	v1stats "github.com/containerd/cgroups/v3/cgroup1/stats"
	v2stats "github.com/containerd/cgroups/v3/cgroup2/stats"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// FromV1 reads a v1 group's metrics (containerd's, or the library's Stat)
// sampled at at.
func FromV1(m *v1stats.Metrics, at time.Time) *Stats {
	s := &Stats{At: at, MemoryMeasured: memoryMeasuredV1, CPUMeasured: cpuMeasured}
	if mem := m.GetMemory(); mem != nil {
		s.RSS, s.Cache = mem.GetTotalRSS(), mem.GetTotalCache()
		// memsw counts memory and swap together.
		s.Swap = mem.GetSwap().GetUsage() - min(mem.GetSwap().GetUsage(), mem.GetUsage().GetUsage())
		s.Usage, s.MaxUsage = mem.GetUsage().GetUsage(), mem.GetUsage().GetMax()
		s.KernelUsage, s.KernelMaxUsage = mem.GetKernel().GetUsage(), mem.GetKernel().GetMax()
	}
	if cpu := m.GetCPU(); cpu != nil {
		s.CPUTotal, s.CPUUser, s.CPUSystem = cpu.GetUsage().GetTotal(), cpu.GetUsage().GetUser(), cpu.GetUsage().GetKernel()
		s.ThrottledPeriods, s.ThrottledTime = cpu.GetThrottling().GetThrottledPeriods(), cpu.GetThrottling().GetThrottledTime()
	}
	return s
}

// FromV2 reads a v2 group's metrics sampled at at.
func FromV2(m *v2stats.Metrics, at time.Time) *Stats {
	s := &Stats{At: at, MemoryMeasured: memoryMeasuredV2, CPUMeasured: cpuMeasured}
	if mem := m.GetMemory(); mem != nil {
		s.RSS, s.Cache, s.Swap = mem.GetAnon(), mem.GetFile(), mem.GetSwapUsage()
		s.Usage, s.MaxUsage = mem.GetUsage(), mem.GetMaxUsage()
		s.KernelUsage = mem.GetKernelStack() + mem.GetSlab() + mem.GetSock()
	}
	if cpu := m.GetCPU(); cpu != nil {
		s.CPUTotal, s.CPUUser, s.CPUSystem = cpu.GetUsageUsec()*1000, cpu.GetUserUsec()*1000, cpu.GetSystemUsec()*1000
		s.ThrottledPeriods, s.ThrottledTime = cpu.GetNrThrottled(), cpu.GetThrottledUsec()*1000
	}
	return s
}

// Usage turns two samples of a task's group into a driver's TaskUsage:
// CPU percentages over the time between them.
func Usage(prev, s *Stats) *driver.TaskUsage {
	part := func(p, c uint64) float64 {
		return CPUPercent(&Stats{At: prev.At, CPUTotal: p}, &Stats{At: s.At, CPUTotal: c})
	}
	return &driver.TaskUsage{Timestamp: s.At,
		Memory: driver.MemoryUsage{RSS: s.RSS, Cache: s.Cache, Swap: s.Swap, Usage: s.Usage,
			MaxUsage: s.MaxUsage, KernelUsage: s.KernelUsage, KernelMaxUsage: s.KernelMaxUsage,
			Measured: s.MemoryMeasured},
		CPU: driver.CPUUsage{Percent: CPUPercent(prev, s),
			UserMode: part(prev.CPUUser, s.CPUUser), SystemMode: part(prev.CPUSystem, s.CPUSystem),
			ThrottledPeriods: s.ThrottledPeriods, ThrottledTime: s.ThrottledTime, Measured: s.CPUMeasured}}
}
