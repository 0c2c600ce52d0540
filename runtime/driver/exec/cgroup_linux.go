package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/troupe-dev/troupe/runtime/cgroups"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// taskCgroups is the driver's side of its tasks' cgroups: the manager
// (nil when the host has none), the cores handed out as cpusets and the
// last usage sample of each task (for CPU percentages).
type taskCgroups struct {
	once    sync.Once
	mgr     *cgroups.Manager
	mu      sync.Mutex
	cores   map[int]string // core -> task ID
	samples cgroups.Samples
}

// cgroups returns the driver's cgroup state, set up on first use.
func (d *Driver) cgroups() *taskCgroups {
	c := d.platform.cg
	c.once.Do(func() {
		c.cores = map[int]string{}
		m, err := cgroups.New(d.cfg.CgroupParent)
		if err != nil {
			d.log.Warn("exec tasks run without cgroups: no limits, no usage, no kill of escaped processes", "err", err)
			return
		}
		c.mgr = m
		d.log.Info("exec tasks get a cgroup each", "version", m.Mode().String(), "parent", m.PathOf(""))
	})
	return c
}

// createCgroup makes the task's group with its limits (a previous run's
// group of the same task is killed and replaced) and returns its path
// and cpuset; "" when the host has no cgroups.
func (d *Driver) createCgroup(cfg *driver.TaskConfig) (path, cpuset string, err error) {
	c := d.cgroups()
	if c.mgr == nil {
		if cfg.Cores > 0 {
			return "", "", fmt.Errorf("%w: %s: cores need cgroups, which this host lacks", driver.ErrInvalidConfig, cfg.ID)
		}
		return "", "", nil
	}
	if cpuset, err = c.cpusetOf(cfg); err != nil {
		return "", "", err
	}
	c.samples.Forget(cfg.ID)
	g, err := c.mgr.CreateTask(cfg.AllocID, cfg.TaskName, cgroups.TaskResources(cfg, cpuset, d.cfg.PidsLimit))
	if err != nil {
		c.freeCores(cfg.ID)
		return "", "", fmt.Errorf("exec: %s: %w", cfg.ID, err)
	}
	return g.Path(), cpuset, nil
}

// group loads a task's group; nil when it has none or it is gone.
func (d *Driver) group(t *task) cgroups.Group { return d.cgroups().mgr.Existing(t.Data.Cgroup) }

// killCgroup SIGKILLs every process in t's group (a daemon that left
// the task's process group too).
func (d *Driver) killCgroup(t *task) error {
	if g := d.group(t); g != nil {
		return g.Kill()
	}
	return nil
}

// removeCgroup kills what is left in t's group, removes it and frees
// its cores.
func (d *Driver) removeCgroup(t *task) error {
	c := d.cgroups()
	c.samples.Forget(t.ID)
	c.freeCores(t.ID)
	if g := d.group(t); g != nil {
		return g.Delete()
	}
	return nil
}

// dropCgroup removes the group of a task whose start failed.
func (d *Driver) dropCgroup(taskID, path string) {
	t := driver.NewTask(taskID, handleState{Cgroup: path})
	if err := d.removeCgroup(t); err != nil {
		d.log.Warn("removing the cgroup of a task that did not start", "task", taskID, "err", err)
	}
}

// recoverCgroup takes a recovered task's cores back; a group that is
// gone is logged, the task runs on without one.
func (d *Driver) recoverCgroup(t *task) {
	c := d.cgroups()
	if t.Data.Cgroup != "" && d.group(t) == nil && !t.Exited() {
		d.log.Warn("the task's cgroup is gone", "task", t.ID, "cgroup", t.Data.Cgroup)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, core := range parseCPUList(t.Data.Cpuset) {
		c.cores[core] = t.ID
	}
}

var _ driver.Statser = (*Driver)(nil)

// TaskStats implements driver.Statser from the task's cgroup: CPU over
// the time since the previous sample (the first: since the task started).
func (d *Driver) TaskStats(_ context.Context, taskID string) (*driver.TaskUsage, error) {
	t, err := d.tasks.Get(taskID)
	if err != nil {
		return nil, err
	}
	if t.Exited() {
		return nil, fmt.Errorf("%w: %s has exited", driver.ErrTaskNotFound, taskID)
	}
	g := d.group(t)
	if g == nil {
		return nil, fmt.Errorf("%w: %s runs without a cgroup", driver.ErrStatsNotSupported, taskID)
	}
	s, err := g.Stats()
	if err != nil {
		return nil, fmt.Errorf("exec: %s: %w", taskID, err)
	}
	return d.cgroups().samples.Usage(taskID, s, t.Handle.StartedAt), nil
}

// cpusetOf is the task's cpuset: the cores the scheduler reserved for
// it, held for the task (the scheduler's word wins over a local pick),
// else takeCores' local pick of cfg.Cores (an alloc placed without
// reservations, by an older server).
func (c *taskCgroups) cpusetOf(cfg *driver.TaskConfig) (string, error) {
	if len(cfg.ReservedCores) == 0 {
		return c.takeCores(cfg.ID, cfg.Cores)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	parts := make([]string, len(cfg.ReservedCores))
	for i, core := range cfg.ReservedCores {
		c.cores[core] = cfg.ID
		parts[i] = strconv.Itoa(core)
	}
	return strings.Join(parts, ","), nil
}

// takeCores hands task n whole cores no other task of this driver has,
// the lowest first, as a cpuset ("" for n == 0).
func (c *taskCgroups) takeCores(taskID string, n int) (string, error) {
	if n <= 0 {
		return "", nil
	}
	online, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var picked []int
	for _, core := range parseCPUList(strings.TrimSpace(string(online))) {
		if owner, used := c.cores[core]; !used || owner == taskID {
			picked = append(picked, core)
		}
		if len(picked) == n {
			break
		}
	}
	if len(picked) < n {
		return "", fmt.Errorf("%w: %s: %d cores asked, %d free", driver.ErrInvalidConfig, taskID, n, len(picked))
	}
	parts := make([]string, len(picked))
	for i, core := range picked {
		c.cores[core] = taskID
		parts[i] = strconv.Itoa(core)
	}
	return strings.Join(parts, ","), nil
}

func (c *taskCgroups) freeCores(taskID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for core, owner := range c.cores {
		if owner == taskID {
			delete(c.cores, core)
		}
	}
}

// parseCPUList reads a kernel CPU list ("0-3,8"); bad parts are skipped.
func parseCPUList(s string) []int {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				continue
			}
		}
		for i := a; i <= b; i++ {
			if !slices.Contains(out, i) {
				out = append(out, i)
			}
		}
	}
	return out
}

// enterCgroup, in the executor, moves it into the task's group so that
// the task is born there; the returned function moves it back out, so
// that killing the group never kills the executor.
func enterCgroup(spec *executorSpec) (leave func(), err error) {
	if spec.Cgroup == "" {
		return func() {}, nil
	}
	g, err := loadGroup(spec.Cgroup)
	if err != nil {
		return nil, err
	}
	back, err := cgroups.Enter(g)
	if err != nil {
		return nil, err
	}
	return func() {
		if err := back(); err != nil {
			fmt.Fprintf(os.Stderr, "executor: leaving the task's cgroup: %v\n", err)
		}
	}, nil
}

// joinCgroup, in an isolated task's init, moves init into the task's
// cgroup for good (it becomes the task).
func joinCgroup(spec *executorSpec) error {
	if spec.Cgroup == "" {
		return nil
	}
	g, err := loadGroup(spec.Cgroup)
	if err != nil {
		return err
	}
	_, err = cgroups.Enter(g)
	return err
}

// endCgroup, in the executor once the task has exited, kills what is left
// in its group (daemons) and reports whether the kernel OOM-killed a
// process in it.
func endCgroup(spec *executorSpec) (oomKilled bool) {
	if spec.Cgroup == "" {
		return false
	}
	g, err := loadGroup(spec.Cgroup)
	if err != nil {
		fmt.Fprintf(os.Stderr, "executor: the task's cgroup: %v\n", err)
		return false
	}
	n, err := g.OOMKills()
	if err != nil {
		fmt.Fprintf(os.Stderr, "executor: reading OOM kills: %v\n", err)
	}
	if err := g.Kill(); err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(os.Stderr, "executor: killing the task's leftovers: %v\n", err)
	}
	return n > 0
}

func loadGroup(path string) (cgroups.Group, error) {
	m, err := cgroups.New("")
	if err != nil {
		return nil, err
	}
	return m.Load(path)
}
