package agent

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/httpapi"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/device"
)

// ClientStats samples this client's host (memory, CPU, disks, uptime) and devices
// when nodeID is "" or this agent's node. For another node it returns the
// HTTP address of that node's agent (elsewhere), which serves them; a
// node this agent does not know is httpapi.ErrUnknownNode, and no node on
// an agent without a client httpapi.ErrNoClient.
func (a *Agent) ClientStats(ctx context.Context, nodeID string) (stats *api.HostStats, elsewhere string, err error) {
	if nodeID != "" && (a.node == nil || nodeID != a.node.GetID()) {
		var n *messages.Node
		if a.store != nil {
			n = a.store.Snapshot().NodeByID(nodeID)
		}
		switch {
		case n == nil:
			return nil, "", fmt.Errorf("%w: %q", httpapi.ErrUnknownNode, nodeID)
		case n.GetHTTPAddr() == "":
			return nil, "", fmt.Errorf("%w: node %q has no HTTP address", httpapi.ErrUnknownNode, nodeID)
		}
		return nil, n.GetHTTPAddr(), nil
	}
	if a.db == nil {
		return nil, "", httpapi.ErrNoClient
	}
	now := a.clock.Now()
	out := &api.HostStats{Timestamp: now.UnixNano()}
	out.Memory, _ = memoryStats("/proc/meminfo")
	out.Uptime, _ = uptime("/proc/uptime")
	if a.hostCPU != nil {
		out.CPU = a.hostCPU.stats()
		out.CPUTicksConsumed = ticksConsumed(out.CPU, a.mhzPerCore())
	}
	out.DiskStats, out.AllocDirStats = hostDisks("/proc/self/mounts", a.AllocDir())
	if a.devices != nil {
		samples, err := a.devices.Stats(ctx)
		if err != nil {
			return nil, "", err
		}
		out.DeviceStats = deviceStats(a.devices.Groups(), samples, now)
	}
	return out, "", nil
}

// deviceStats is each group's instances' samples in the API's shape.
func deviceStats(groups []*messages.NodeDeviceResource, samples map[string]*device.InstanceStats, at time.Time) []*api.DeviceGroupStats {
	var out []*api.DeviceGroupStats
	for _, g := range groups {
		gs := &api.DeviceGroupStats{Vendor: g.GetVendor(), Type: g.GetType(), Name: g.GetName(),
			InstanceStats: map[string]*api.DeviceStats{}}
		for _, in := range g.GetInstances() {
			s := samples[in.GetID()]
			if s == nil {
				continue
			}
			ds := &api.DeviceStats{Stats: &api.StatObject{Attributes: map[string]*api.StatValue{}}, Timestamp: at}
			for name, v := range s.Values {
				ds.Stats.Attributes[name] = &api.StatValue{FloatNumeratorVal: f64(v), Unit: statUnit(name), Desc: name}
			}
			if sum := s.Summary; sum != nil {
				ds.Summary = &api.StatValue{FloatNumeratorVal: f64(sum.Value), Unit: sum.Unit, Desc: sum.Desc}
				if sum.Total > 0 {
					ds.Summary.FloatDenominatorVal = f64(sum.Total)
				}
			}
			gs.InstanceStats[in.GetID()] = ds
		}
		out = append(out, gs)
	}
	return out
}

// f64 is a pointer to v, for the API's optional values.
func f64(v float64) *float64 { return &v }

// statUnit reads a stat's unit from its name's suffix (device.InstanceStats).
func statUnit(name string) string {
	for suffix, unit := range map[string]string{"_mib": "MiB", "_percent": "%", "_c": "C", "_w": "W", "_mhz": "MHz"} {
		if strings.HasSuffix(name, suffix) {
			return unit
		}
	}
	return ""
}

// memoryStats reads the host's memory from a meminfo file (kB values).
func memoryStats(path string) (*api.HostMemoryStats, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	kb := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		if v, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64); err == nil {
			kb[name] = v * 1024
		}
	}
	m := &api.HostMemoryStats{Total: kb["MemTotal"], Available: kb["MemAvailable"], Free: kb["MemFree"]}
	if _, ok := kb["MemAvailable"]; !ok { // kernels before 3.14
		m.Available = kb["MemFree"] + kb["Buffers"] + kb["Cached"]
	}
	if m.Total >= m.Available {
		m.Used = m.Total - m.Available
	}
	return m, sc.Err()
}

// uptime reads the seconds since boot from an uptime file.
func uptime(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	secs, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	f, err := strconv.ParseFloat(secs, 64)
	if err != nil {
		return 0, err
	}
	return uint64(f), nil
}
