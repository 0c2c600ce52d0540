package nvidia

import (
	"context"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/troupe-dev/troupe/runtime/device"
)

// Stat names in device.InstanceStats.Values.
const (
	StatGPUUtilization    = "gpu_utilization_percent"    // time the GPU was busy, last sample period
	StatMemoryUtilization = "memory_utilization_percent" // time memory was read or written
	StatMemoryUsedMiB     = "memory_used_mib"
	StatTemperatureC      = "temperature_c"
	StatPowerW            = "power_w" // current draw
)

// Stats samples every GPU, keyed by UUID. A value the GPU does not report
// is left out, and a GPU that cannot be identified is skipped. With NVML
// unavailable it returns nothing and no error.
func (p *Plugin) Stats(ctx context.Context) (map[string]*device.InstanceStats, error) {
	if ok, _ := p.Available(); !ok {
		return nil, nil
	}
	count, ret := p.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("nvidia: DeviceGetCount: %w", ret)
	}
	out := make(map[string]*device.InstanceStats, count)
	for i := range count {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dev, ret := p.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		uuid, ret := dev.GetUUID()
		if ret != nvml.SUCCESS {
			continue
		}
		out[uuid] = sample(dev)
	}
	return out, nil
}

// sample reads one GPU's figures; its memory used of total is the
// summary.
func sample(dev nvml.Device) *device.InstanceStats {
	v := map[string]float64{}
	out := &device.InstanceStats{Values: v}
	if u, ret := dev.GetUtilizationRates(); ret == nvml.SUCCESS {
		v[StatGPUUtilization] = float64(u.Gpu)
		v[StatMemoryUtilization] = float64(u.Memory)
	}
	if mem, ret := dev.GetMemoryInfo(); ret == nvml.SUCCESS {
		v[StatMemoryUsedMiB] = float64(mem.Used) / mib
		out.Summary = &device.StatSummary{Desc: "memory used / total", Unit: "MiB",
			Value: v[StatMemoryUsedMiB], Total: float64(mem.Total) / mib}
	}
	if c, ret := dev.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
		v[StatTemperatureC] = float64(c)
	}
	if mw, ret := dev.GetPowerUsage(); ret == nvml.SUCCESS {
		v[StatPowerW] = float64(mw) / 1000
	}
	return out
}
