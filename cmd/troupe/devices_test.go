package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

func TestNodeStatusDevices(t *testing.T) {
	f := newFakeAPI(t)
	n := sampleNode()
	n.NodeResources.Devices = []*messages.NodeDeviceResource{{
		Vendor: "nvidia", Type: "gpu", Name: "NVIDIA H100 80GB HBM3",
		Attributes: map[string]string{"memory_mib": "81559", "cuda_compute": "9.0"},
		Instances: []*messages.NodeDevice{
			{ID: "GPU-aaa", Healthy: true, Locality: map[string]string{"pci_bus_id": "0000:18:00.0"}},
			{ID: "GPU-bbb", Healthy: false, HealthDescription: "XID 79"},
		},
	}}
	f.nodes[nodeID] = n
	holder := sampleAlloc()
	holder.AllocatedResources.Tasks["server"].Devices = []*messages.AllocatedDeviceResource{
		{Vendor: "nvidia", Type: "gpu", Name: "NVIDIA H100 80GB HBM3", DeviceIDs: []string{"GPU-aaa"}}}
	f.allocs[holder.ID] = holder
	gone := sampleAlloc() // stopped: its GPU is free again
	gone.ID, gone.DesiredStatus, gone.ClientStatus = "a3a3a3a3-0000", "stop", "complete"
	gone.AllocatedResources.Tasks["server"].Devices = []*messages.AllocatedDeviceResource{
		{Vendor: "nvidia", Type: "gpu", Name: "NVIDIA H100 80GB HBM3", DeviceIDs: []string{"GPU-bbb"}}}
	f.allocs[gone.ID] = gone
	code, out, errOut := f.runCLI("node", "status", nodeID)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^Device Group\s+Healthy\s+Allocated$`, out)
	require.Regexp(t, `(?m)^nvidia/gpu/NVIDIA H100 80GB HBM3\s+1/2\s+1/2$`, out)
	require.NotContains(t, out, "GPU-aaa", "instances only with -verbose")

	code, out, _ = f.runCLI("node", "status", "-verbose", nodeID)
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^ID\s+Healthy\s+Allocation\s+PCI Bus ID\s+Description$`, out)
	require.Regexp(t, `(?m)^GPU-aaa\s+true\s+`+allocID+`\s+0000:18:00\.0\s+<none>$`, out)
	require.Regexp(t, `(?m)^GPU-bbb\s+false\s+<none>\s+<none>\s+XID 79$`, out)
	require.Regexp(t, `(?m)^memory_mib\s+= 81559$`, out)
}

func TestAllocStatusDevices(t *testing.T) {
	f := newFakeAPI(t)
	a := sampleAlloc()
	for _, res := range a.GetAllocatedResources().GetTasks() {
		res.Devices = []*messages.AllocatedDeviceResource{{Vendor: "nvidia", Type: "gpu", Name: "H100", DeviceIDs: []string{"GPU-aaa", "GPU-ccc"}}}
	}
	f.allocs[allocID] = a
	code, out, errOut := f.runCLI("alloc", "status", allocID)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^nvidia/gpu/H100\s+GPU-aaa,GPU-ccc$`, out)
}

func TestNodeStatusStats(t *testing.T) {
	f := newFakeAPI(t)
	f.nodes[nodeID] = sampleNode()
	used, total, util := 1024.0, 81559.0, 17.0
	f.stats[nodeID] = &api.HostStats{
		Memory: &api.HostMemoryStats{Total: 8 << 30, Used: 3 << 30}, Uptime: 7200, CPUTicksConsumed: 1234.4,
		CPU:           []*api.HostCPUStats{{CPU: "cpu0", User: 10.5, System: 2.25, Idle: 87.25, Total: 12.75}},
		AllocDirStats: &api.HostDiskStats{Device: "/dev/vda", Mountpoint: "/", Size: 100 << 30, Used: 40 << 30},
		DiskStats: []*api.HostDiskStats{{Device: "/dev/vda", Mountpoint: "/", Size: 100 << 30, Used: 40 << 30,
			Available: 60 << 30, UsedPercent: 40, InodesUsedPercent: 3.5}},
		DeviceStats: []*api.DeviceGroupStats{{Vendor: "nvidia", Type: "gpu", Name: "H100", InstanceStats: map[string]*api.DeviceStats{
			"GPU-aaa": {
				Summary: &api.StatValue{FloatNumeratorVal: &used, FloatDenominatorVal: &total, Unit: "MiB"},
				Stats: &api.StatObject{Attributes: map[string]*api.StatValue{
					"gpu_utilization_percent": {FloatNumeratorVal: &util, Unit: "%"}}},
			},
		}}},
	}
	running := sampleAlloc()
	f.allocs[running.ID] = running
	f.allocStats[running.ID] = &api.AllocResourceUsage{ResourceUsage: &api.ResourceUsage{
		CpuStats: &api.CpuStats{TotalTicks: 250.4}, MemoryStats: &api.MemoryStats{RSS: 96 << 20}}}
	done := sampleAlloc() // finished: not asked for its stats
	done.ID, done.DesiredStatus, done.ClientStatus = "a4a4a4a4-0000", "stop", "complete"
	f.allocs[done.ID] = done
	code, out, errOut := f.runCLI("node", "status", nodeID)
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, out, "Utilization", "stats only with -stats")

	code, out, errOut = f.runCLI("node", "status", "-stats", nodeID)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^Allocation Resource Utilization\nCPU\s+Memory\n250/4000 MHz\s+96/8192 MiB$`, out)
	require.Regexp(t, `(?m)^Host Resource Utilization\nCPU\s+Memory\s+Disk\s+Uptime\n1234/4000 MHz\s+3072/8192 MiB\s+40960/102400 MiB\s+2h0m0s$`, out)
	require.Regexp(t, `(?m)^cpu0\s+10\.50%\s+2\.25%\s+87\.25%$`, out)
	require.Regexp(t, `(?m)^/dev/vda\s+/\s+102400 MiB\s+40960 MiB\s+61440 MiB\s+40\.00%\s+3\.50%$`, out)
	require.Len(t, f.callsTo("GET", "/v1/client/allocation/"+running.ID+"/stats"), 1)
	require.Empty(t, f.callsTo("GET", "/v1/client/allocation/"+done.ID+"/stats"))
	require.Regexp(t, `(?m)^nvidia/gpu/H100\[GPU-aaa\]\s+1024 / 81559 MiB$`, out)
	require.NotContains(t, out, "gpu_utilization_percent")
	calls := f.callsTo("GET", "/v1/client/stats")
	require.Len(t, calls, 1)
	require.Equal(t, nodeID, calls[0].Query["node_id"])

	code, out, _ = f.runCLI("node", "status", "-stats", "-verbose", nodeID)
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^nvidia/gpu/H100\[GPU-aaa\] gpu_utilization_percent = 17 %$`, out)

	delete(f.stats, nodeID) // the node's agent cannot be asked
	code, out, errOut = f.runCLI("node", "status", "-stats", nodeID)
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "querying the node's stats")
	require.Contains(t, out, "\nAllocations\n", "the rest of the status is still shown")
}
