package api

// AllocResourceUsage answers GET /v1/client/allocation/:id/stats: the
// usage of an allocation's running tasks and their sum, in Nomad's shape
// (github.com/hashicorp/nomad/api's Allocations().Stats decodes it).
type AllocResourceUsage struct {
	ResourceUsage *ResourceUsage
	Tasks         map[string]*TaskResourceUsage
	Timestamp     int64 // unix nanos
}

// TaskResourceUsage is one task's usage.
type TaskResourceUsage struct {
	ResourceUsage *ResourceUsage
	Timestamp     int64
	Pids          map[string]*ResourceUsage
}

// ResourceUsage is memory and CPU usage.
type ResourceUsage struct {
	MemoryStats *MemoryStats
	CpuStats    *CpuStats //nolint:revive // Nomad's name
	DeviceStats []*DeviceGroupStats
}

// MemoryStats is memory usage in bytes; Measured names what was measured.
type MemoryStats struct {
	RSS            uint64
	Cache          uint64
	Swap           uint64
	Usage          uint64
	MaxUsage       uint64
	KernelUsage    uint64
	KernelMaxUsage uint64
	Measured       []string
}

// CpuStats is CPU usage: percentages of one core, TotalTicks in MHz,
// ThrottledTime in nanoseconds.
type CpuStats struct { //nolint:revive // Nomad's name
	SystemMode       float64
	UserMode         float64
	TotalTicks       float64
	ThrottledPeriods uint64
	ThrottledTime    uint64
	Percent          float64
	Measured         []string
}

// Stats reads the resource usage of an allocation's tasks from the client
// that runs it.
func (a *Allocations) Stats(id string, q *QueryOptions) (*AllocResourceUsage, error) {
	var out AllocResourceUsage
	if _, err := a.c.query("/v1/client/allocation/"+id+"/stats", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}
