package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// SimulatedNodes returns n ready, eligible nodes in dc1 with varied
// capacity (4000-16000 MHz, 8-64 GiB), a healthy exec driver and Linux
// attributes. The same seed gives the same nodes.
func SimulatedNodes(n int, seed uint64) []*messages.Node {
	r := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	nodes := make([]*messages.Node, n)
	for i := range nodes {
		id := fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff,
			r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff)
		name := fmt.Sprintf("sim-%05d", i)
		cpu := int64(4000 + 1000*r.IntN(13))
		memGiB := int64(8 * (1 + r.IntN(8)))
		nodes[i] = &messages.Node{
			ID:                    id,
			SecretID:              id,
			Name:                  name,
			Datacenter:            "dc1",
			Region:                "global",
			NodePool:              "default",
			Status:                messages.NodeStatusReady,
			SchedulingEligibility: messages.NodeSchedulingEligible,
			Drivers: map[string]*messages.DriverInfo{
				"exec": {Detected: true, Healthy: true, HealthDescription: "Healthy"},
			},
			Attributes: map[string]string{
				"kernel.name":     "linux",
				"cpu.arch":        "amd64",
				"unique.hostname": name,
				"os.name":         "ubuntu",
				"cpu.numcores":    fmt.Sprint(cpu / 1000),
				"driver.exec":     "1",
			},
			NodeResources: &messages.NodeResources{
				Cpu:    &messages.NodeCpuResources{CpuShares: cpu, TotalCpuCores: int32(cpu / 1000)},
				Memory: &messages.NodeMemoryResources{MemoryMB: memGiB * 1024},
				Disk:   &messages.NodeDiskResources{DiskMB: 100 * 1024},
			},
		}
	}
	return nodes
}

// MemSnapshot is an in-memory Snapshot for tests, benchmarks and
// simulations. It keeps per-node usage totals (NodeUsageSource), so an
// alloc must not be changed after it was added: add a new value with the
// same ID instead. It is not safe for concurrent writes.
type MemSnapshot struct {
	jobs         map[string]*messages.Job
	versions     map[string]*messages.Job // by namespace, ID and version
	nodes        []*messages.Node
	nodeByID     map[string]int
	allocs       map[string]*messages.Allocation
	allocsByJob  map[string][]*messages.Allocation
	allocsByNode map[string][]*messages.Allocation
	usage        map[string]resources
}

var (
	_ NodeUsageSource  = (*MemSnapshot)(nil)
	_ JobVersionSource = (*MemSnapshot)(nil)
)

// newMemSnapshot returns a snapshot holding nodes and jobs.
func newMemSnapshot(nodes []*messages.Node, jobs ...*messages.Job) *MemSnapshot {
	s := &MemSnapshot{
		jobs:         map[string]*messages.Job{},
		versions:     map[string]*messages.Job{},
		nodeByID:     map[string]int{},
		allocs:       map[string]*messages.Allocation{},
		allocsByJob:  map[string][]*messages.Allocation{},
		allocsByNode: map[string][]*messages.Allocation{},
		usage:        map[string]resources{},
	}
	for _, n := range nodes {
		s.AddNode(n)
	}
	for _, j := range jobs {
		s.AddJob(j)
	}
	return s
}

func jobKey(namespace, id string) string { return namespace + "\x00" + id }

// AddJob stores (or replaces) the current version of a job; earlier
// versions stay readable with JobVersion.
func (s *MemSnapshot) AddJob(j *messages.Job) {
	s.jobs[jobKey(j.Namespace, j.ID)] = j
	// a copy: tests change a job in place to make its next version
	s.versions[jobKey(j.Namespace, j.ID)+"\x00"+strconv.FormatUint(j.Version, 10)] = proto.Clone(j).(*messages.Job)
}

// JobVersion returns a version of a job that AddJob stored, or nil.
func (s *MemSnapshot) JobVersion(namespace, id string, version uint64) *messages.Job {
	return s.versions[jobKey(namespace, id)+"\x00"+strconv.FormatUint(version, 10)]
}

// RemoveJob purges a job.
func (s *MemSnapshot) RemoveJob(namespace, id string) { delete(s.jobs, jobKey(namespace, id)) }

// AddNode stores a node, replacing one with the same ID in place.
func (s *MemSnapshot) AddNode(n *messages.Node) {
	if i, ok := s.nodeByID[n.ID]; ok {
		s.nodes[i] = n
		return
	}
	s.nodeByID[n.ID] = len(s.nodes)
	s.nodes = append(s.nodes, n)
}

// AddAlloc stores an alloc, replacing one with the same ID.
func (s *MemSnapshot) AddAlloc(a *messages.Allocation) {
	jk := jobKey(a.Namespace, a.JobID)
	if old, ok := s.allocs[a.ID]; ok {
		if !old.TerminalStatus() {
			s.addUsage(old.NodeID, allocResources(old), -1)
		}
		s.allocsByJob[jk] = replaceAlloc(s.allocsByJob[jk], a)
		if old.NodeID == a.NodeID {
			s.allocsByNode[a.NodeID] = replaceAlloc(s.allocsByNode[a.NodeID], a)
		} else {
			s.allocsByNode[old.NodeID] = slices.DeleteFunc(s.allocsByNode[old.NodeID],
				func(x *messages.Allocation) bool { return x.ID == a.ID })
			s.allocsByNode[a.NodeID] = append(s.allocsByNode[a.NodeID], a)
		}
	} else {
		s.allocsByJob[jk] = append(s.allocsByJob[jk], a)
		s.allocsByNode[a.NodeID] = append(s.allocsByNode[a.NodeID], a)
	}
	s.allocs[a.ID] = a
	if !a.TerminalStatus() {
		s.addUsage(a.NodeID, allocResources(a), 1)
	}
}

func replaceAlloc(list []*messages.Allocation, a *messages.Allocation) []*messages.Allocation {
	for i, x := range list {
		if x.ID == a.ID {
			list[i] = a
		}
	}
	return list
}

func (s *MemSnapshot) addUsage(nodeID string, r resources, sign int64) {
	u := s.usage[nodeID]
	u.add(r, sign)
	s.usage[nodeID] = u
}

// ApplyPlan commits a plan the way the FSM would, without re-checking
// fit: it adds the placements and marks the stopped and preempted allocs.
func (s *MemSnapshot) ApplyPlan(plan *messages.ApplyPlan) {
	for _, st := range slices.Concat(plan.Stop, plan.Preemptions) {
		old := s.allocs[st.AllocID]
		if old == nil {
			continue
		}
		a := cloneAlloc(old)
		a.DesiredStatus, a.DesiredDescription = st.DesiredStatus, st.DesiredDescription
		a.PreemptedByAllocation = st.PreemptedByAllocation
		if st.ClientStatus != "" {
			a.ClientStatus = st.ClientStatus
		}
		s.AddAlloc(a)
	}
	for _, a := range plan.Place {
		s.AddAlloc(a)
	}
}

// Alloc returns an alloc by ID.
func (s *MemSnapshot) Alloc(id string) *messages.Allocation { return s.allocs[id] }

// JobByID implements Snapshot.
func (s *MemSnapshot) JobByID(namespace, id string) *messages.Job {
	return s.jobs[jobKey(namespace, id)]
}

// Nodes implements Snapshot, in insertion order.
func (s *MemSnapshot) Nodes() []*messages.Node { return s.nodes }

// NodeByID implements Snapshot.
func (s *MemSnapshot) NodeByID(id string) *messages.Node {
	if i, ok := s.nodeByID[id]; ok {
		return s.nodes[i]
	}
	return nil
}

// AllocsByJob implements Snapshot.
func (s *MemSnapshot) AllocsByJob(namespace, jobID string) []*messages.Allocation {
	return s.allocsByJob[jobKey(namespace, jobID)]
}

// AllocsByNode implements Snapshot.
func (s *MemSnapshot) AllocsByNode(nodeID string) []*messages.Allocation {
	return s.allocsByNode[nodeID]
}

// NodeUsage implements NodeUsageSource.
func (s *MemSnapshot) NodeUsage(nodeID string) (cpuShares, memoryMB, diskMB int64) {
	u := s.usage[nodeID]
	return u.cpu, u.mem, u.disk
}
