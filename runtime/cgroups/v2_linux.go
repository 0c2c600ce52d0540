package cgroups

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/cgroups/v3/cgroup2"
)

// groupV2 is a task's group on the unified hierarchy.
type groupV2 struct {
	root, path string
	m          *cgroup2.Manager
}

func createV2(root, p string, r Resources) (Group, error) {
	res := v2Resources(r)
	if err := checkControllersV2(root, res.EnabledControllers()); err != nil {
		return nil, fmt.Errorf("cgroups: creating %s: %w", p, err)
	}
	m, err := cgroup2.NewManager(root, p, res)
	if err != nil {
		return nil, fmt.Errorf("cgroups: creating %s: %w", p, err)
	}
	return &groupV2{root: root, path: p, m: m}, nil
}

func loadV2(root, p string) (Group, error) {
	if _, err := os.Stat(filepath.Join(root, p)); err != nil {
		return nil, fmt.Errorf("cgroups: %s: %w", p, err)
	}
	m, err := cgroup2.Load(p, cgroup2.WithMountpoint(root))
	if err != nil {
		return nil, fmt.Errorf("cgroups: loading %s: %w", p, err)
	}
	return &groupV2{root: root, path: p, m: m}, nil
}

// checkControllersV2 refuses limits whose controllers the hierarchy's
// root does not offer: the library would make the group and silently
// not limit.
func checkControllersV2(root string, want []string) error {
	if len(want) == 0 {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(root, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("cgroups: reading the controllers of %s: %w", root, err)
	}
	have := strings.Fields(string(b))
	var missing []string
	for _, c := range want {
		if !slices.Contains(have, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s not available in %s (it offers %q)", ErrControllerMissing,
			strings.Join(missing, ", "), root, strings.Join(have, " "))
	}
	return nil
}

// v2Resources turns r into v2 values: the shares become a weight,
// memory_max memory.max, memory memory.low.
func v2Resources(r Resources) *cgroup2.Resources {
	spec := v1Spec(r)
	spec.Memory.Swap = nil // swap is left to the host's memory.swap.max
	out := cgroup2.ToResources(spec)
	if out.CPU != nil && out.CPU.Weight == nil && out.CPU.Cpus == "" {
		out.CPU = nil
	}
	if out.Memory != nil && out.Memory.Max == nil && out.Memory.Low == nil {
		out.Memory = nil
	}
	return out
}

func (g *groupV2) Path() string { return g.path }

func (g *groupV2) AddProc(pid int) error { return g.m.AddProc(uint64(pid)) }

func (g *groupV2) Procs() ([]int, error) {
	ps, err := g.m.Procs(true)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = int(p)
	}
	return out, nil
}

// Kill writes cgroup.kill (the library falls back to freeze-and-kill on
// kernels before 5.14).
func (g *groupV2) Kill() error {
	err := g.m.Kill()
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

func (g *groupV2) Stats() (*Stats, error) {
	m, err := g.m.Stat()
	if err != nil {
		return nil, err
	}
	return FromV2(m, time.Now()), nil
}

func (g *groupV2) OOMKills() (uint64, error) {
	m, err := g.m.Stat()
	if err != nil {
		return 0, err
	}
	return m.GetMemoryEvents().GetOomKill(), nil
}

func (g *groupV2) Delete() error {
	if err := killAndWait(g); err != nil {
		return err
	}
	if err := g.m.Delete(); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cgroups: removing %s: %w", g.path, err)
	}
	return nil
}

// enter moves this process into g and returns how to move it back to
// the group /proc/self/cgroup names.
func (g *groupV2) enter() (func() error, error) {
	orig, err := ownGroupV2("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	if err := g.m.AddProc(uint64(self)); err != nil {
		return nil, fmt.Errorf("cgroups: entering %s: %w", g.path, err)
	}
	back := filepath.Join(g.root, orig, "cgroup.procs")
	return func() error { return os.WriteFile(back, []byte(strconv.Itoa(self)), 0) }, nil
}

// ownGroupV2 reads the unified group ("0::/path") from a cgroup file.
func ownGroupV2(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "0::"); ok {
			return p, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("cgroups: no unified group in %s", file)
}
