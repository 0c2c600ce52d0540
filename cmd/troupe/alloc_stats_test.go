package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
)

func TestAllocStatusStats(t *testing.T) {
	f := newFakeAPI(t)
	f.allocs[allocID] = sampleAlloc()
	f.allocStats[allocID] = &api.AllocResourceUsage{Tasks: map[string]*api.TaskResourceUsage{
		"server": {ResourceUsage: &api.ResourceUsage{
			MemoryStats: &api.MemoryStats{RSS: 40 << 20, Cache: 1 << 20, Usage: 42 << 20, MaxUsage: 50 << 20},
			CpuStats:    &api.CpuStats{Percent: 12.5, TotalTicks: 25, UserMode: 10, SystemMode: 2.5, ThrottledPeriods: 3},
		}},
	}}
	code, out, errOut := f.runCLI("alloc", "status", "-stats", "a1a1")
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"Task Usage:", "25/100 MHz", "40.0/128 MiB", "Memory Stats:", "42.0 MiB", "50.0 MiB",
		"CPU Stats:", "12.50%", "10.00%"} {
		require.Contains(t, out, want)
	}
	code, out, _ = f.runCLI("alloc", "status", "a1a1")
	require.Equal(t, 0, code)
	require.NotContains(t, out, "Memory Stats:", "only with -stats")
}
