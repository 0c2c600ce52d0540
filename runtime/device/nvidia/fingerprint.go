package nvidia

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/troupe-dev/troupe/messages"
)

const mib = 1 << 20

// gpu is what one fingerprint learnt about one GPU.
type gpu struct {
	uuid     string
	name     string
	pciBusID string
	attrs    map[string]string
	problems []string // failed queries and XID errors; none means healthy
}

// ok reports whether a query succeeded. A query the GPU does not support
// is no problem (its attribute is left out); any other failure is.
func (g *gpu) ok(op string, ret nvml.Return) bool {
	switch ret {
	case nvml.SUCCESS:
		return true
	case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND:
		return false
	}
	g.problems = append(g.problems, op+": "+ret.Error())
	return false
}

// Fingerprint reports the GPUs grouped by model name, groups sorted by
// name and instances in NVML index (PCI bus) order. With NVML unavailable
// it returns nothing and no error; it fails only when NVML cannot count
// the GPUs, or ctx is done.
func (p *Plugin) Fingerprint(ctx context.Context) ([]*messages.NodeDeviceResource, error) {
	if ok, _ := p.Available(); !ok {
		return nil, nil
	}
	count, ret := p.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("nvidia: DeviceGetCount: %w", ret)
	}
	driver, ret := p.lib.SystemGetDriverVersion()
	if ret != nvml.SUCCESS {
		p.warnOnce("nvidia: cannot read the driver version", "err", ret.Error())
		driver = ""
	}
	gpus := make([]*gpu, 0, count)
	for i := range count {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if g := p.probe(i); g != nil {
			gpus = append(gpus, g)
		}
	}
	return p.group(gpus, driver), nil
}

// probe queries GPU i. It returns nil for a GPU that cannot be identified
// and was never seen before.
func (p *Plugin) probe(i int) *gpu {
	g := &gpu{attrs: map[string]string{}}
	dev, ret := p.lib.DeviceGetHandleByIndex(i)
	op := "DeviceGetHandleByIndex"
	if ret == nvml.SUCCESS {
		g.uuid, ret = dev.GetUUID()
		op = "GetUUID"
	}
	known, wasKnown := p.knownAt(i)
	if ret != nvml.SUCCESS {
		if !wasKnown {
			p.warnOnce("nvidia: skipping a GPU that NVML cannot identify", "index", i, "op", op, "err", ret.Error())
			return nil
		}
		g.uuid, g.name = known.uuid, known.name
		g.problems = append(g.problems, op+": "+ret.Error())
		p.addXid(g)
		return g
	}
	name, ret := dev.GetName()
	switch {
	case g.ok("GetName", ret):
		g.name = name
	case wasKnown && known.uuid == g.uuid:
		g.name = known.name
	default:
		g.name = "unknown"
	}
	p.remember(i, knownGPU{uuid: g.uuid, name: g.name})
	queryAttributes(dev, g)
	p.addXid(g)
	return g
}

// queryAttributes fills g's attributes and PCI bus ID.
func queryAttributes(dev nvml.Device, g *gpu) {
	if mem, ret := dev.GetMemoryInfo(); g.ok("GetMemoryInfo", ret) {
		g.attrs[AttrMemoryMiB] = strconv.FormatUint(mem.Total/mib, 10)
	}
	if major, minor, ret := dev.GetCudaComputeCapability(); g.ok("GetCudaComputeCapability", ret) {
		g.attrs[AttrCudaCompute] = fmt.Sprintf("%d.%d", major, minor)
	}
	if pci, ret := dev.GetPciInfo(); g.ok("GetPciInfo", ret) {
		g.pciBusID = cString(pci.BusId[:])
	}
	if mw, ret := dev.GetPowerManagementLimit(); g.ok("GetPowerManagementLimit", ret) {
		g.attrs[AttrPowerW] = strconv.FormatUint(uint64(mw/1000), 10)
	}
	if bar1, ret := dev.GetBAR1MemoryInfo(); g.ok("GetBAR1MemoryInfo", ret) {
		g.attrs[AttrBAR1MiB] = strconv.FormatUint(bar1.Bar1Total/mib, 10)
	}
	if mhz, ret := dev.GetMaxClockInfo(nvml.CLOCK_GRAPHICS); g.ok("GetMaxClockInfo(graphics)", ret) {
		g.attrs[AttrGraphicsClockMHz] = strconv.FormatUint(uint64(mhz), 10)
	}
	if mhz, ret := dev.GetMaxClockInfo(nvml.CLOCK_MEM); g.ok("GetMaxClockInfo(memory)", ret) {
		g.attrs[AttrMemoryClockMHz] = strconv.FormatUint(uint64(mhz), 10)
	}
	if mode, ret := dev.GetDisplayMode(); g.ok("GetDisplayMode", ret) {
		g.attrs[AttrDisplayState] = enableState(mode)
	}
	if mode, ret := dev.GetPersistenceMode(); g.ok("GetPersistenceMode", ret) {
		g.attrs[AttrPersistenceMode] = enableState(mode)
	}
}

// group builds the device groups; gpus are in index order.
func (p *Plugin) group(gpus []*gpu, driver string) []*messages.NodeDeviceResource {
	byName := map[string]*messages.NodeDeviceResource{}
	var out []*messages.NodeDeviceResource
	for _, g := range gpus {
		grp := byName[g.name]
		if grp == nil {
			grp = &messages.NodeDeviceResource{Vendor: Vendor, Type: TypeGPU, Name: g.name, Attributes: map[string]string{}}
			if driver != "" {
				grp.Attributes[AttrDriverVersion] = driver
			}
			byName[g.name] = grp
			out = append(out, grp)
		}
		for k, v := range g.attrs {
			if _, set := grp.Attributes[k]; !set {
				grp.Attributes[k] = v
			}
		}
		inst := &messages.NodeDevice{ID: g.uuid, Healthy: len(g.problems) == 0, HealthDescription: strings.Join(g.problems, "; ")}
		if !inst.Healthy {
			p.warnOnce("nvidia: GPU unhealthy", "uuid", g.uuid, "reason", inst.HealthDescription)
		}
		if g.pciBusID != "" {
			inst.Locality = map[string]string{LocalityPCIBusID: g.pciBusID}
		}
		grp.Instances = append(grp.Instances, inst)
	}
	slices.SortStableFunc(out, func(a, b *messages.NodeDeviceResource) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (p *Plugin) knownAt(i int) (knownGPU, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k, ok := p.known[i]
	return k, ok
}

func (p *Plugin) remember(i int, k knownGPU) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.known[i] = k
}

// addXid adds g's critical XID error, if it had one, to its problems.
func (p *Plugin) addXid(g *gpu) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if desc, ok := p.xids[g.uuid]; ok {
		g.problems = append(g.problems, desc)
	}
}

// cString converts a NUL-terminated C char array.
func cString(b []int8) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

func enableState(s nvml.EnableState) string {
	if s == nvml.FEATURE_ENABLED {
		return "enabled"
	}
	return "disabled"
}
