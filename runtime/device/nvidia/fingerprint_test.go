package nvidia

import (
	"context"
	"fmt"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/device/nvidia/nvmltest"
)

func fingerprint(t *testing.T, p *Plugin) []*messages.NodeDeviceResource {
	t.Helper()
	groups, err := p.Fingerprint(context.Background())
	require.NoError(t, err)
	return groups
}

// health maps instance ID to its HealthDescription, "" when healthy.
func health(t *testing.T, groups []*messages.NodeDeviceResource) map[string]string {
	out := map[string]string{}
	for _, g := range groups {
		for _, inst := range g.Instances {
			require.Equal(t, inst.HealthDescription == "", inst.Healthy, "instance %s", inst.ID)
			out[inst.ID] = inst.HealthDescription
		}
	}
	return out
}

func TestFingerprintDGXH100(t *testing.T) {
	p, s, _ := mockPlugin(t)
	groups := fingerprint(t, p)
	require.Len(t, groups, 1)
	g := groups[0]
	require.Equal(t, "nvidia", g.Vendor)
	require.Equal(t, "gpu", g.Type)
	require.Equal(t, "NVIDIA H100 80GB HBM3", g.Name)
	require.Equal(t, map[string]string{
		AttrMemoryMiB:        "81920",
		AttrCudaCompute:      "9.0",
		AttrDriverVersion:    "550.54.15",
		AttrDisplayState:     "disabled",
		AttrPersistenceMode:  "enabled",
		AttrPowerW:           "700",
		AttrBAR1MiB:          "131072",
		AttrGraphicsClockMHz: "1980",
		AttrMemoryClockMHz:   "2619",
	}, g.Attributes)

	require.Len(t, g.Instances, nvmltest.GPUs)
	for i, inst := range g.Instances {
		require.Equal(t, s.UUIDs()[i], inst.ID, "instances in index order, ID = UUID")
		require.Regexp(t, `^GPU-[0-9a-f-]{36}$`, inst.ID)
		require.True(t, inst.Healthy)
		require.Empty(t, inst.HealthDescription)
		require.Equal(t, map[string]string{LocalityPCIBusID: fmt.Sprintf("0000:%02x:00.0", i)}, inst.Locality)
	}
}

func TestFingerprintFailedQueryMarksOnlyThatGPU(t *testing.T) {
	p, s, logs := mockPlugin(t)
	lost := func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST }
	s.GPU(0).GetMemoryInfoFunc = lost
	s.GPU(3).GetMemoryInfoFunc = lost
	s.GPU(3).GetPowerManagementLimitFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }

	groups := fingerprint(t, p)
	require.Len(t, groups, 1)
	h := health(t, groups)
	uuids := s.UUIDs()
	require.Equal(t, "GetMemoryInfo: ERROR_GPU_IS_LOST", h[uuids[0]])
	require.Equal(t, "GetMemoryInfo: ERROR_GPU_IS_LOST; GetPowerManagementLimit: ERROR_UNKNOWN", h[uuids[3]])
	for i, id := range uuids {
		if i != 0 && i != 3 {
			require.Empty(t, h[id], "GPU %d", i)
		}
	}
	require.Equal(t, "81920", groups[0].Attributes[AttrMemoryMiB], "an attribute comes from the first GPU that has it")

	fingerprint(t, p)
	require.Equal(t, 2, logs.count("GPU unhealthy"), "each unhealthy GPU is logged once")
}

func TestFingerprintUnsupportedQueryIsNoProblem(t *testing.T) {
	p, s, _ := mockPlugin(t)
	for i := range nvmltest.GPUs {
		s.GPU(i).GetDisplayModeFunc = func() (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	}
	groups := fingerprint(t, p)
	require.NotContains(t, groups[0].Attributes, AttrDisplayState)
	for id, desc := range health(t, groups) {
		require.Empty(t, desc, id)
	}
}

func TestFingerprintGroupsByModel(t *testing.T) {
	p, s, _ := mockPlugin(t)
	for _, i := range []int{6, 7} {
		d := s.GPU(i)
		d.GetNameFunc = func() (string, nvml.Return) { return "NVIDIA H200", nvml.SUCCESS }
		d.MemoryInfo.Total = 143771 << 20
	}
	groups := fingerprint(t, p)
	require.Len(t, groups, 2)
	require.Equal(t, "NVIDIA H100 80GB HBM3", groups[0].Name, "groups sorted by name")
	require.Equal(t, "NVIDIA H200", groups[1].Name)
	require.Len(t, groups[0].Instances, 6)
	require.Equal(t, []string{s.UUIDs()[6], s.UUIDs()[7]}, []string{groups[1].Instances[0].ID, groups[1].Instances[1].ID})
	require.Equal(t, "81920", groups[0].Attributes[AttrMemoryMiB])
	require.Equal(t, "143771", groups[1].Attributes[AttrMemoryMiB])
	require.Equal(t, "550.54.15", groups[1].Attributes[AttrDriverVersion])
}

func TestFingerprintLostGPUKeepsItsUUID(t *testing.T) {
	p, s, _ := mockPlugin(t)
	fingerprint(t, p)
	s.GPU(2).GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }

	groups := fingerprint(t, p)
	require.Len(t, groups[0].Instances, nvmltest.GPUs, "a GPU seen before does not vanish")
	require.Equal(t, "GetUUID: ERROR_GPU_IS_LOST", health(t, groups)[s.UUIDs()[2]])
}

func TestFingerprintSkipsGPUNeverIdentified(t *testing.T) {
	p, s, logs := mockPlugin(t)
	handle := s.DeviceGetHandleByIndexFunc
	s.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i == 2 {
			return nil, nvml.ERROR_UNKNOWN
		}
		return handle(i)
	}
	for range 3 {
		groups := fingerprint(t, p)
		require.Len(t, groups[0].Instances, nvmltest.GPUs-1)
		require.NotContains(t, health(t, groups), s.UUIDs()[2])
	}
	require.Equal(t, 1, logs.count("skipping a GPU that NVML cannot identify"), "logged once, not every period")
}

func TestFingerprintFailsWhenGPUsCannotBeCounted(t *testing.T) {
	p, s, _ := mockPlugin(t)
	s.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
	_, err := p.Fingerprint(context.Background())
	require.ErrorIs(t, err, nvml.ERROR_UNKNOWN)
}

func TestFingerprintStopsOnCancel(t *testing.T) {
	p, _, _ := mockPlugin(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.Fingerprint(ctx)
	require.ErrorIs(t, err, context.Canceled)
}
