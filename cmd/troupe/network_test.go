package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func TestAllocStatusNetwork(t *testing.T) {
	f := newFakeAPI(t)
	a := sampleAlloc()
	a.NetworkStatus = &messages.NetworkStatus{InterfaceName: "eth0", Address: "172.26.64.5"}
	a.AllocatedResources.Shared = &messages.AllocatedSharedResources{Networks: []*messages.NetworkResource{{
		Mode: "bridge", IP: "10.0.0.7",
		ReservedPorts: []*messages.Port{{Label: "http", Value: 8080, To: 80}},
		DynamicPorts:  []*messages.Port{{Label: "admin", Value: 23456}},
	}}}
	f.allocs[allocID] = a
	code, out, errOut := f.runCLI("alloc", "status", allocID)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^Mode\s+= bridge$`, out)
	require.Regexp(t, `(?m)^Address\s+= 172\.26\.64\.5$`, out)
	require.Regexp(t, `(?m)^http\s+false\s+8080\s+80\s+10\.0\.0\.7:8080$`, out)
	require.Regexp(t, `(?m)^admin\s+true\s+23456\s+23456\s+10\.0\.0\.7:23456$`, out)

	a.NetworkStatus, a.AllocatedResources.Shared = nil, nil
	code, out, _ = f.runCLI("alloc", "status", allocID)
	require.Equal(t, 0, code)
	require.NotContains(t, out, "Allocation Addresses")
}
