package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/troupe-dev/troupe/actors/alloc"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/httpapi"
	"github.com/troupe-dev/troupe/runtime/driver"
)

var _ httpapi.StatsBackend = (*Agent)(nil)

// AllocStats samples the usage of the running tasks of an allocation this
// client runs (task "" : all of them), through the drivers that started
// them, and sums them as Nomad does. A task whose driver reports no usage
// is left out; an allocation without a running task is a wrapped
// driver.ErrTaskNotFound.
func (a *Agent) AllocStats(ctx context.Context, allocID, task string) (*api.AllocResourceUsage, error) {
	if a.db == nil {
		return nil, ErrNotClient
	}
	sa, err := a.db.Alloc(allocID)
	if err != nil || sa == nil {
		return nil, fmt.Errorf("%w: allocation %q does not run on this client", driver.ErrTaskNotFound, allocID)
	}
	now := a.clock.Now().UnixNano()
	out := &api.AllocResourceUsage{Tasks: map[string]*api.TaskResourceUsage{}, Timestamp: now,
		ResourceUsage: &api.ResourceUsage{MemoryStats: &api.MemoryStats{}, CpuStats: &api.CpuStats{}}}
	mhzPerCore := a.mhzPerCore()
	for _, name := range alloc.Tasks(sa.Alloc) {
		raw, ok := sa.Handles[name]
		if !ok || (task != "" && name != task) {
			continue
		}
		var h driver.TaskHandle
		if json.Unmarshal(raw, &h) != nil {
			continue
		}
		d, ok := a.drivers[h.Driver]
		if !ok {
			continue
		}
		u, err := driver.StatsOf(ctx, d, h.TaskID)
		if errors.Is(err, driver.ErrStatsNotSupported) || errors.Is(err, driver.ErrTaskNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		tu := taskUsage(u, mhzPerCore)
		out.Tasks[name] = tu
		addUsage(out.ResourceUsage, tu.ResourceUsage)
	}
	if task != "" && out.Tasks[task] == nil {
		return nil, fmt.Errorf("%w: task %q of allocation %q is not running or reports no usage",
			driver.ErrTaskNotFound, task, allocID)
	}
	return out, nil
}

// mhzPerCore is this node's CPU per core (its fingerprinted
// cpu.frequency), which turns a percentage of a core into Nomad's
// TotalTicks (MHz). The node's resources are not used: the client's own
// copy of its node carries only the attributes measured at start.
func (a *Agent) mhzPerCore() float64 {
	if a.node == nil {
		return 0
	}
	mhz, _ := strconv.ParseFloat(a.node.GetAttributes()["cpu.frequency"], 64)
	return mhz
}

func taskUsage(u *driver.TaskUsage, mhzPerCore float64) *api.TaskResourceUsage {
	m, c := u.Memory, u.CPU
	return &api.TaskResourceUsage{Timestamp: u.Timestamp.UnixNano(), ResourceUsage: &api.ResourceUsage{
		MemoryStats: &api.MemoryStats{RSS: m.RSS, Cache: m.Cache, Swap: m.Swap, Usage: m.Usage,
			MaxUsage: m.MaxUsage, KernelUsage: m.KernelUsage, KernelMaxUsage: m.KernelMaxUsage, Measured: m.Measured},
		CpuStats: &api.CpuStats{SystemMode: c.SystemMode, UserMode: c.UserMode, Percent: c.Percent,
			TotalTicks: c.Percent / 100 * mhzPerCore, ThrottledPeriods: c.ThrottledPeriods,
			ThrottledTime: c.ThrottledTime, Measured: c.Measured},
	}}
}

// addUsage adds a task's usage to the allocation's sum.
func addUsage(sum, u *api.ResourceUsage) {
	sm, m := sum.MemoryStats, u.MemoryStats
	sm.RSS += m.RSS
	sm.Cache += m.Cache
	sm.Swap += m.Swap
	sm.Usage += m.Usage
	sm.MaxUsage += m.MaxUsage
	sm.KernelUsage += m.KernelUsage
	sm.KernelMaxUsage += m.KernelMaxUsage
	sm.Measured = m.Measured
	sc, c := sum.CpuStats, u.CpuStats
	sc.SystemMode += c.SystemMode
	sc.UserMode += c.UserMode
	sc.Percent += c.Percent
	sc.TotalTicks += c.TotalTicks
	sc.ThrottledPeriods += c.ThrottledPeriods
	sc.ThrottledTime += c.ThrottledTime
	sc.Measured = c.Measured
}
