package main

import (
	"testing"

	"github.com/stretchr/testify/require"

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
