package nvidia

import (
	"context"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/device/nvidia/nvmltest"
)

func TestStats(t *testing.T) {
	p, s, _ := mockPlugin(t)
	s.GPU(2).MemoryInfo.Used = 1024 << 20
	s.GPU(4).GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }

	stats, err := p.Stats(context.Background())
	require.NoError(t, err)
	require.Len(t, stats, nvmltest.GPUs)
	require.Equal(t, map[string]float64{
		StatGPUUtilization:    20,
		StatMemoryUtilization: 5,
		StatMemoryUsedMiB:     1024,
		StatTemperatureC:      32,
		StatPowerW:            70,
	}, stats[s.UUIDs()[2]].Values)
	require.NotContains(t, stats[s.UUIDs()[4]].Values, StatTemperatureC, "a value the GPU lacks is left out")
	require.Contains(t, stats[s.UUIDs()[4]].Values, StatPowerW)
	sum := stats[s.UUIDs()[2]].Summary
	require.NotNil(t, sum, "the memory used of total is the summary")
	require.Equal(t, "MiB", sum.Unit)
	require.EqualValues(t, 1024, sum.Value)
	require.EqualValues(t, float64(s.GPU(2).MemoryInfo.Total)/(1<<20), sum.Total)
}
