package httpapi

import (
	"sort"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// Nomad's shapes for nodes, allocations and CSI volumes: what Nomad's
// client (and its CLI, which dereferences without checking) expects to be
// present even when it is zero or empty. A messages struct that is absent
// is left out of the JSON, so the wrappers here fill in zero-valued ones
// and add the fields Nomad derives (the pre-0.9 Resources, Reserved and
// TaskResources; Shared.Ports; a volume's ReadAllocs, WriteAllocs and
// Allocations).

// legacyResources is Nomad's older Resources shape, still read by its
// CLI (`node status`, `alloc status` dereference CPU, MemoryMB, DiskMB).
type legacyResources struct {
	CPU      int64
	MemoryMB int64
	DiskMB   int64
	Networks []*messages.NetworkResource
}

// nodeJSON is a node as GET /v1/node/:id answers it.
type nodeJSON struct {
	*messages.Node
	Resources *legacyResources
	Reserved  *legacyResources
}

// newNodeJSON is a copy of n with NodeResources and ReservedResources (and
// their Cpu, Memory and Disk) present, and Nomad's older Resources and
// Reserved derived from them, and without its SecretID (as Nomad's
// Node.Sanitize): every API output of a node (GET /v1/node/:id, the event
// stream) goes through here, and only the node's client knows its secret.
func newNodeJSON(n *messages.Node) *nodeJSON {
	out := proto.Clone(n).(*messages.Node)
	out.SecretID = ""
	out.NodeResources = fullNodeResources(out.NodeResources)
	out.ReservedResources = fullReservedResources(out.ReservedResources)
	r, res := out.NodeResources, out.ReservedResources
	return &nodeJSON{Node: out,
		Resources: &legacyResources{CPU: r.Cpu.CpuShares, MemoryMB: r.Memory.MemoryMB, DiskMB: r.Disk.DiskMB},
		Reserved:  &legacyResources{CPU: res.Cpu.CpuShares, MemoryMB: res.Memory.MemoryMB, DiskMB: res.Disk.DiskMB}}
}

// fullNodeResources is r (a copy when it must change) with Cpu, Memory and
// Disk present.
func fullNodeResources(r *messages.NodeResources) *messages.NodeResources {
	if r.GetCpu() != nil && r.GetMemory() != nil && r.GetDisk() != nil {
		return r
	}
	out := &messages.NodeResources{}
	if r != nil {
		out = proto.Clone(r).(*messages.NodeResources)
	}
	fillResources(&out.Cpu, &out.Memory, &out.Disk)
	return out
}

// fullReservedResources is r (a copy when it must change) with Cpu, Memory
// and Disk present.
func fullReservedResources(r *messages.NodeReservedResources) *messages.NodeReservedResources {
	if r.GetCpu() != nil && r.GetMemory() != nil && r.GetDisk() != nil {
		return r
	}
	out := &messages.NodeReservedResources{}
	if r != nil {
		out = proto.Clone(r).(*messages.NodeReservedResources)
	}
	fillResources(&out.Cpu, &out.Memory, &out.Disk)
	return out
}

// fillResources makes each of a node's resource parts present (zero when
// it was missing).
func fillResources(cpu **messages.NodeCpuResources, mem **messages.NodeMemoryResources, disk **messages.NodeDiskResources) {
	if *cpu == nil {
		*cpu = &messages.NodeCpuResources{}
	}
	if *mem == nil {
		*mem = &messages.NodeMemoryResources{}
	}
	if *disk == nil {
		*disk = &messages.NodeDiskResources{}
	}
}

// allocJSON is a whole allocation as Nomad answers it.
type allocJSON struct {
	*messages.Allocation
	Resources          *legacyResources
	TaskResources      map[string]*legacyResources
	AllocatedResources *allocatedJSON
}

// allocatedJSON is Nomad's AllocatedResources: Tasks always a map, Shared
// always present, with the ports of its networks.
type allocatedJSON struct {
	Tasks  map[string]*messages.AllocatedTaskResources
	Shared sharedJSON
}

type sharedJSON struct {
	DiskMB   int64
	Networks []*messages.NetworkResource
	Ports    []portMapping
}

// portMapping is Nomad's api.PortMapping: a port of the allocation's
// networks (host port Value, To inside the network namespace).
type portMapping struct {
	Label  string
	Value  int32
	To     int32
	HostIP string
}

// newAllocJSON is a (already a copy, as withJob makes) in Nomad's shape.
func newAllocJSON(a *messages.Allocation) *allocJSON {
	if a.Metrics == nil {
		a.Metrics = &messages.AllocMetricRef{}
	}
	ar := a.GetAllocatedResources()
	alloc := &allocatedJSON{Tasks: map[string]*messages.AllocatedTaskResources{}}
	legacy := &legacyResources{}
	tasks := map[string]*legacyResources{}
	for name, t := range ar.GetTasks() {
		t = fullTaskResources(t)
		alloc.Tasks[name] = t
		tasks[name] = &legacyResources{CPU: t.Cpu.CpuShares, MemoryMB: t.Memory.MemoryMB}
		legacy.CPU += t.Cpu.CpuShares
		legacy.MemoryMB += t.Memory.MemoryMB
	}
	shared := ar.GetShared()
	alloc.Shared = sharedJSON{DiskMB: shared.GetDiskMB(), Networks: shared.GetNetworks(), Ports: ports(shared.GetNetworks())}
	legacy.DiskMB, legacy.Networks = shared.GetDiskMB(), shared.GetNetworks()
	return &allocJSON{Allocation: a, Resources: legacy, TaskResources: tasks, AllocatedResources: alloc}
}

// fullTaskResources is t (a copy when it must change) with Cpu and Memory
// present.
func fullTaskResources(t *messages.AllocatedTaskResources) *messages.AllocatedTaskResources {
	if t.GetCpu() != nil && t.GetMemory() != nil {
		return t
	}
	out := &messages.AllocatedTaskResources{}
	if t != nil {
		out = proto.Clone(t).(*messages.AllocatedTaskResources)
	}
	if out.Cpu == nil {
		out.Cpu = &messages.AllocatedCpuResources{}
	}
	if out.Memory == nil {
		out.Memory = &messages.AllocatedMemoryResources{}
	}
	return out
}

// ports lists the reserved then dynamic ports of the networks, each with
// its network's IP; nil when there are none.
func ports(nets []*messages.NetworkResource) []portMapping {
	var out []portMapping
	for _, n := range nets {
		for _, group := range [][]*messages.Port{n.GetReservedPorts(), n.GetDynamicPorts()} {
			for _, p := range group {
				out = append(out, portMapping{Label: p.GetLabel(), Value: p.GetValue(), To: p.GetTo(), HostIP: n.GetIP()})
			}
		}
	}
	return out
}

// volumeJSON is a CSI volume as GET /v1/volume/csi/:id answers it: its
// Claims, and Nomad's view of them: ReadAllocs and WriteAllocs map each
// claiming allocation's ID to null (as Nomad's API does), and Allocations
// has their list rows.
type volumeJSON struct {
	*messages.CSIVolume
	ReadAllocs  map[string]*api.AllocListStub
	WriteAllocs map[string]*api.AllocListStub
	Allocations []*api.AllocListStub
}

func newVolumeJSON(snap *state.Snap, v *messages.CSIVolume) *volumeJSON {
	out := &volumeJSON{CSIVolume: v, ReadAllocs: map[string]*api.AllocListStub{},
		WriteAllocs: map[string]*api.AllocListStub{}, Allocations: []*api.AllocListStub{}}
	seen := map[string]bool{}
	for _, c := range v.GetClaims() {
		id := c.GetAllocationID()
		if seen[id] {
			continue
		}
		seen[id] = true
		if c.GetMode() == "write" {
			out.WriteAllocs[id] = nil
		} else {
			out.ReadAllocs[id] = nil
		}
		if a := snap.AllocByID(id); a != nil {
			out.Allocations = append(out.Allocations, api.NewAllocListStub(a))
		}
	}
	sort.Slice(out.Allocations, func(i, j int) bool { return out.Allocations[i].ID < out.Allocations[j].ID })
	return out
}
