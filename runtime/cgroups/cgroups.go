package cgroups

import (
	"fmt"
	"path"
	"strings"
	"time"
)

// Mode is the cgroup version a host runs.
type Mode int

// The cgroup versions.
const (
	ModeNone Mode = iota
	ModeV1
	ModeV2
)

var modeNames = map[Mode]string{ModeNone: "none", ModeV1: "v1", ModeV2: "v2"}

func (m Mode) String() string { return modeNames[m] }

// Default parents, as Nomad's "/nomad" (v1) and "nomad.slice" (v2).
const (
	DefaultParentV1 = "/troupe"
	DefaultParentV2 = "/troupe.slice"
)

// DefaultPidsLimit is the pids limit of a task's group when the client
// sets none.
const DefaultPidsLimit = 16384

// Resources are one task's limits; a zero field sets nothing.
type Resources struct {
	// CPUShares is the task's CPU in MHz, as Nomad writes cpu.shares
	// (v2: converted to cpu.weight).
	CPUShares uint64
	// MemoryMax is the hard limit in bytes (memory_max, else memory).
	MemoryMax int64
	// MemorySoft is the soft limit in bytes (memory), when below MemoryMax.
	MemorySoft int64
	// Cpuset lists the CPUs the task may run on ("0-1,3"); empty: all.
	Cpuset string
	// PidsMax bounds the task's processes and threads.
	PidsMax int64
}

// Stats is one sample of a group's usage. Bytes and nanoseconds.
type Stats struct {
	At                           time.Time
	RSS, Cache, Swap             uint64
	Usage, MaxUsage              uint64
	KernelUsage, KernelMaxUsage  uint64
	CPUTotal, CPUUser, CPUSystem uint64 // ns
	ThrottledPeriods             uint64
	ThrottledTime                uint64 // ns
	// MemoryMeasured and CPUMeasured name the figures this version
	// measures, as Nomad reports them.
	MemoryMeasured []string
	CPUMeasured    []string
}

// What each version measures (Nomad's names).
var (
	memoryMeasuredV1 = []string{"RSS", "Cache", "Swap", "Usage", "Max Usage", "Kernel Usage", "Kernel Max Usage"}
	memoryMeasuredV2 = []string{"RSS", "Cache", "Swap", "Usage", "Max Usage"}
	cpuMeasured      = []string{"System Mode", "User Mode", "Throttled Periods", "Throttled Time", "Percent"}
)

// CPUPercent is the CPU used between two samples as a percentage of one
// core (200 is two cores busy).
func CPUPercent(prev, cur *Stats) float64 {
	if prev == nil || cur == nil || !cur.At.After(prev.At) || cur.CPUTotal < prev.CPUTotal {
		return 0
	}
	return float64(cur.CPUTotal-prev.CPUTotal) / float64(cur.At.Sub(prev.At).Nanoseconds()) * 100
}

// Group is one task's control group.
type Group interface {
	// Path is the group's path below the cgroup mount ("/troupe/a.web").
	Path() string
	// AddProc moves a process (all its threads) into the group.
	AddProc(pid int) error
	// Procs lists the processes in the group.
	Procs() ([]int, error)
	// Kill SIGKILLs every process in the group; an empty group is no error.
	Kill() error
	// Stats samples the group's usage.
	Stats() (*Stats, error)
	// OOMKills is how many processes the kernel OOM-killed in the group.
	OOMKills() (uint64, error)
	// Delete kills what is left in the group and removes it; a group
	// already gone is no error.
	Delete() error
}

// GroupName is a task's group name below the parent: Nomad's
// "<allocID>.<task>", with ".scope" on v2.
func GroupName(mode Mode, allocID, task string) string {
	n := allocID + "." + task
	if mode == ModeV2 {
		n += ".scope"
	}
	return n
}

// checkName refuses a name that is not one path element.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00\n") {
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	return nil
}

// cleanParent makes parent an absolute clean path without "..".
func cleanParent(parent string) (string, error) {
	if parent == "" || strings.Contains(parent, "\x00") {
		return "", fmt.Errorf("%w: parent %q", ErrInvalidName, parent)
	}
	p := path.Clean("/" + parent)
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return "", fmt.Errorf("%w: parent %q", ErrInvalidName, parent)
		}
	}
	return p, nil
}

// CheckParent refuses a parent that is not a cgroup path of its own
// below the root: empty, "/", a ".." element or a NUL.
func CheckParent(parent string) error {
	for _, el := range strings.Split(parent, "/") {
		if el == ".." {
			return fmt.Errorf("%w: parent %q has a \"..\"", ErrInvalidName, parent)
		}
	}
	p, err := cleanParent(parent)
	if err != nil {
		return err
	}
	if p == "/" {
		return fmt.Errorf("%w: parent %q is the root", ErrInvalidName, parent)
	}
	return nil
}

// Existing loads a task's group for a driver: nil when the host has no
// cgroups (m nil), the task has no group (path "") or it is gone.
func (m *Manager) Existing(path string) Group {
	if m == nil || path == "" {
		return nil
	}
	g, err := m.Load(path)
	if err != nil {
		return nil
	}
	return g
}
