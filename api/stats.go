package api

import "time"

// HostStats answers GET /v1/client/stats: one client's host and device
// usage, in Nomad's shape (github.com/hashicorp/nomad/api's
// Nodes().Stats decodes it).
type HostStats struct {
	Memory *HostMemoryStats
	// CPU is each core's use over the last sampling interval, in percent.
	CPU []*HostCPUStats
	// DiskStats are the host's block-device file systems; AllocDirStats is
	// the one that holds the allocation directories.
	DiskStats     []*HostDiskStats
	AllocDirStats *HostDiskStats
	DeviceStats   []*DeviceGroupStats
	Uptime        uint64 // seconds since the host booted
	// CPUTicksConsumed is the CPU the host used over the last sampling
	// interval, in MHz (busy fraction of each core times its frequency).
	CPUTicksConsumed float64
	Timestamp        int64 // unix nanos of the sample
}

// HostCPUStats is one core's use in percent ("cpu0").
type HostCPUStats struct {
	CPU    string
	User   float64
	System float64
	Idle   float64
	Total  float64
}

// HostDiskStats is one file system's size and use, in bytes and percent.
type HostDiskStats struct {
	Device            string
	Mountpoint        string
	Size              uint64
	Used              uint64
	Available         uint64
	UsedPercent       float64
	InodesUsedPercent float64
}

// HostMemoryStats is the host's memory, in bytes.
type HostMemoryStats struct {
	Total     uint64
	Available uint64
	Used      uint64
	Free      uint64
}

// GetUsed is m's Used, 0 for a nil m.
func (m *HostMemoryStats) GetUsed() uint64 {
	if m == nil {
		return 0
	}
	return m.Used
}

// GetTotal is m's Total, 0 for a nil m.
func (m *HostMemoryStats) GetTotal() uint64 {
	if m == nil {
		return 0
	}
	return m.Total
}

// DeviceGroupStats is the usage of one device group's instances.
type DeviceGroupStats struct {
	Vendor string
	Type   string
	Name   string
	// InstanceStats maps each instance ID to its sample.
	InstanceStats map[string]*DeviceStats
}

// DeviceStats is one instance's sample: Summary is its most telling
// figure (a GPU's memory used of total), Stats all of them.
type DeviceStats struct {
	Summary   *StatValue
	Stats     *StatObject
	Timestamp time.Time
}

// StatObject is a set of named statistics.
type StatObject struct {
	Nested     map[string]*StatObject
	Attributes map[string]*StatValue
}

// StatValue is one statistic: a float, or a fraction when the
// denominator is set.
type StatValue struct {
	FloatNumeratorVal   *float64 `json:",omitempty"`
	FloatDenominatorVal *float64 `json:",omitempty"`
	Unit                string
	Desc                string
}

// Stats reads a client's host and device usage (GET
// /v1/client/stats?node_id=ID); the agent asked passes the request on to
// the node's own agent. An empty nodeID asks the agent itself.
func (n *Nodes) Stats(nodeID string, q *QueryOptions) (*HostStats, error) {
	if nodeID != "" {
		q = withParam(q, "node_id", nodeID)
	}
	var out HostStats
	if _, err := n.c.query("/v1/client/stats", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}
