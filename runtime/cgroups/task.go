package cgroups

import "github.com/troupe-dev/troupe/runtime/driver"

// TaskResources are a task's limits as Nomad sets them: memory_max (else
// memory) hard, memory soft when below it, the MHz as CPU shares, the
// cpuset given and a pids limit (DefaultPidsLimit when pids <= 0).
func TaskResources(cfg *driver.TaskConfig, cpuset string, pids int64) Resources {
	if pids <= 0 {
		pids = DefaultPidsLimit
	}
	r := Resources{CPUShares: uint64(max(cfg.CPU, 0)), Cpuset: cpuset, PidsMax: pids}
	r.MemoryMax = max(cfg.MemoryMaxMB, cfg.MemoryMB) << 20
	if cfg.MemoryMaxMB > cfg.MemoryMB && cfg.MemoryMB > 0 {
		r.MemorySoft = cfg.MemoryMB << 20
	}
	return r
}

// CreateTask makes the group of an allocation's task (Nomad's
// "<allocID>.<task>") with r's limits; a group a previous run of the
// task left (a restart) is killed and removed first, so that its
// counters start again.
func (m *Manager) CreateTask(allocID, task string, r Resources) (Group, error) {
	name := GroupName(m.Mode(), allocID, task)
	if old, err := m.Load(m.PathOf(name)); err == nil {
		_ = old.Delete()
	}
	return m.Create(name, r)
}
