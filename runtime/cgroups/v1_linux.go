package cgroups

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3/cgroup1"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// v1Controllers are the v1 hierarchies a task's group lives in.
var v1Controllers = []cgroup1.Name{cgroup1.Cpu, cgroup1.Cpuacct, cgroup1.Cpuset,
	cgroup1.Memory, cgroup1.Pids, cgroup1.Freezer}

// v1Hierarchy is the host's mounted hierarchies, ours only.
func v1Hierarchy() ([]cgroup1.Subsystem, error) {
	all, err := cgroup1.Default()
	if err != nil {
		return nil, err
	}
	var out []cgroup1.Subsystem
	for _, s := range all {
		if slices.Contains(v1Controllers, s.Name()) {
			out = append(out, s)
		}
	}
	return out, nil
}

// groupV1 is a task's group on v1: one directory per controller.
type groupV1 struct {
	path string
	cg   cgroup1.Cgroup
}

func createV1(p string, r Resources) (Group, error) {
	c, err := cgroup1.New(cgroup1.StaticPath(p), v1Spec(r), cgroup1.WithHierarchy(v1Hierarchy))
	if err != nil {
		return nil, fmt.Errorf("cgroups: creating %s: %w", p, err)
	}
	return &groupV1{path: p, cg: c}, nil
}

func loadV1(p string) (Group, error) {
	c, err := cgroup1.Load(cgroup1.StaticPath(p), cgroup1.WithHierarchy(v1Hierarchy))
	if errors.Is(err, cgroup1.ErrCgroupDeleted) {
		return nil, fmt.Errorf("cgroups: %s: %w", p, os.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("cgroups: loading %s: %w", p, err)
	}
	return &groupV1{path: p, cg: c}, nil
}

// v1Spec turns r into the OCI resources the library writes.
func v1Spec(r Resources) *specs.LinuxResources {
	out := &specs.LinuxResources{CPU: &specs.LinuxCPU{}, Memory: &specs.LinuxMemory{}}
	if r.CPUShares > 0 {
		shares := max(r.CPUShares, 2)
		out.CPU.Shares = &shares
	}
	out.CPU.Cpus = r.Cpuset
	if r.MemoryMax > 0 {
		limit := r.MemoryMax
		out.Memory.Limit = &limit
		if memswSupported() {
			out.Memory.Swap = &limit // no swap beyond the limit: the task is OOM-killed
		}
	}
	if r.MemorySoft > 0 && (r.MemoryMax == 0 || r.MemorySoft < r.MemoryMax) {
		soft := r.MemorySoft
		out.Memory.Reservation = &soft
	}
	if r.PidsMax > 0 {
		pids := r.PidsMax
		out.Pids = &specs.LinuxPids{Limit: &pids}
	}
	return out
}

// memswSupported: the kernel accounts swap per memory group.
func memswSupported() bool {
	root, err := cgroup1.RootPath(cgroup1.Memory)
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(root, "memory.memsw.limit_in_bytes"))
	return err == nil
}

func (g *groupV1) Path() string { return g.path }

func (g *groupV1) AddProc(pid int) error { return g.cg.AddProc(uint64(pid)) }

// Procs lists the processes in the group in any of its hierarchies: a
// process is moved into them (and out) one at a time, so one being moved
// at that moment (an executor entering to start its task, or leaving)
// may be in the memory group and not yet in the freezer's; a listing of
// one hierarchy would miss it and leave a group that cannot be removed.
func (g *groupV1) Procs() ([]int, error) {
	var out []int
	subs, gone := g.cg.Subsystems(), 0
	for _, s := range subs {
		ps, err := g.cg.Processes(s.Name(), true)
		if errors.Is(err, cgroup1.ErrCgroupDeleted) || errors.Is(err, os.ErrNotExist) {
			gone++ // removed in this hierarchy already
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if !slices.Contains(out, p.Pid) {
				out = append(out, p.Pid)
			}
		}
	}
	if gone == len(subs) {
		return nil, fmt.Errorf("cgroups: %s: %w", g.path, os.ErrNotExist)
	}
	return out, nil
}

// Kill freezes the group, so that nothing in it forks while it is
// killed, SIGKILLs every process and thaws it so they die.
func (g *groupV1) Kill() error {
	frozen := g.cg.Freeze() == nil
	procs, err := g.Procs()
	if err == nil {
		for _, pid := range procs {
			if kerr := syscall.Kill(pid, syscall.SIGKILL); kerr != nil && !errors.Is(kerr, syscall.ESRCH) {
				err = kerr
			}
		}
	}
	if frozen {
		if terr := g.cg.Thaw(); terr != nil && err == nil {
			err = terr
		}
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

func (g *groupV1) Stats() (*Stats, error) {
	m, err := g.cg.Stat(cgroup1.IgnoreNotExist)
	if err != nil {
		return nil, err
	}
	return FromV1(m, time.Now()), nil
}

func (g *groupV1) OOMKills() (uint64, error) {
	m, err := g.cg.Stat(cgroup1.IgnoreNotExist)
	if err != nil {
		return 0, err
	}
	return m.GetMemoryOomControl().GetOomKill(), nil
}

func (g *groupV1) Delete() error {
	if err := killAndWait(g); err != nil {
		return err
	}
	if err := g.cg.Delete(); err != nil && !errors.Is(err, cgroup1.ErrCgroupDeleted) {
		return fmt.Errorf("cgroups: removing %s: %w", g.path, err)
	}
	return nil
}

// enter moves this process into g, in every hierarchy, and returns how
// to move it back.
func (g *groupV1) enter() (func() error, error) {
	self := os.Getpid()
	orig, err := cgroup1.Load(cgroup1.PidPath(self), cgroup1.WithHierarchy(v1Hierarchy))
	if err != nil {
		return nil, fmt.Errorf("cgroups: finding our own groups: %w", err)
	}
	if err := g.cg.AddProc(uint64(self)); err != nil {
		return nil, fmt.Errorf("cgroups: entering %s: %w", g.path, err)
	}
	return func() error { return orig.AddProc(uint64(self)) }, nil
}
