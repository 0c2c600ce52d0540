package main

import (
	"fmt"
	"io"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// writeTaskUsage writes a task's CPU and memory use against what it was
// given, and the detail of both (`alloc status -stats`).
func writeTaskUsage(w io.Writer, a *messages.Allocation, task string, u *api.TaskResourceUsage) {
	if u == nil || u.ResourceUsage == nil {
		return
	}
	mem, cpu := u.ResourceUsage.MemoryStats, u.ResourceUsage.CpuStats
	res := a.GetAllocatedResources().GetTasks()[task]
	if mem != nil && cpu != nil {
		fmt.Fprintln(w, "Task Usage:")
		writeTable(w, []string{"CPU", "Memory"}, [][]string{{
			fmt.Sprintf("%.0f/%d MHz", cpu.TotalTicks, res.GetCpu().GetCpuShares()),
			fmt.Sprintf("%s/%d MiB", mib(mem.RSS), res.GetMemory().GetMemoryMB()),
		}})
	}
	if mem != nil {
		fmt.Fprintln(w, "Memory Stats:")
		writeTable(w, []string{"RSS", "Cache", "Swap", "Usage", "Max Usage"}, [][]string{{
			mib(mem.RSS) + " MiB", mib(mem.Cache) + " MiB", mib(mem.Swap) + " MiB",
			mib(mem.Usage) + " MiB", mib(mem.MaxUsage) + " MiB",
		}})
	}
	if cpu != nil {
		fmt.Fprintln(w, "CPU Stats:")
		writeTable(w, []string{"Percent", "System Mode", "User Mode", "Throttled Periods", "Throttled Time"}, [][]string{{
			fmt.Sprintf("%.2f%%", cpu.Percent), fmt.Sprintf("%.2f%%", cpu.SystemMode),
			fmt.Sprintf("%.2f%%", cpu.UserMode), fmt.Sprint(cpu.ThrottledPeriods),
			fmt.Sprintf("%d ms", cpu.ThrottledTime/1e6),
		}})
	}
}

func mib(b uint64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }
