package cgroups

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	cg "github.com/containerd/cgroups/v3"
)

// unifiedMount is where a v2 host mounts its hierarchy.
const unifiedMount = "/sys/fs/cgroup"

// Manager makes and finds the groups of tasks below one parent.
type Manager struct {
	mode   Mode
	root   string // v2: the unified mount point
	parent string
}

// Detect says which cgroup version this host runs: v2 only on a unified
// host (a hybrid one runs its controllers on v1), none when there is no
// cgroup file system or the process is not root.
func Detect() Mode {
	if os.Geteuid() != 0 {
		return ModeNone
	}
	switch cg.Mode() {
	case cg.Unified:
		return ModeV2
	case cg.Legacy, cg.Hybrid:
		return ModeV1
	}
	return ModeNone
}

// New returns a Manager for parent on this host ("" takes the version's
// default parent); ErrUnavailable when the host has no cgroups.
func New(parent string) (*Manager, error) {
	return newManager(Detect(), unifiedMount, parent)
}

// newManager is New for a given version and v2 mount point (tests point
// v2 at a directory tree of their own).
func newManager(mode Mode, root, parent string) (*Manager, error) {
	if mode == ModeNone {
		return nil, ErrUnavailable
	}
	if parent == "" {
		parent = DefaultParentV1
		if mode == ModeV2 {
			parent = DefaultParentV2
		}
	}
	p, err := cleanParent(parent)
	if err != nil {
		return nil, err
	}
	return &Manager{mode: mode, root: root, parent: p}, nil
}

// Mode is the version the Manager drives.
func (m *Manager) Mode() Mode { return m.mode }

// PathOf is the path of the group named name below the parent.
func (m *Manager) PathOf(name string) string { return path.Join(m.parent, name) }

// Create makes (or takes over, when it exists) the group name below the
// parent with r's limits.
func (m *Manager) Create(name string, r Resources) (Group, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	p := m.PathOf(name)
	if m.mode == ModeV2 {
		return createV2(m.root, p, r)
	}
	return createV1(p, r)
}

// Load finds the group at path (as Path returned it); a group that is
// gone is an error wrapping os.ErrNotExist.
func (m *Manager) Load(p string) (Group, error) {
	cp, err := cleanParent(p)
	if err != nil || cp == "/" {
		return nil, fmt.Errorf("%w: group path %q", ErrInvalidName, p)
	}
	if m.mode == ModeV2 {
		return loadV2(m.root, cp)
	}
	return loadV1(cp)
}

// Enter moves the calling process into g and returns the function that
// moves it back where it was. Children it starts in between are born in
// g.
func Enter(g Group) (leave func() error, err error) {
	switch g := g.(type) {
	case *groupV1:
		return g.enter()
	case *groupV2:
		return g.enter()
	}
	return nil, fmt.Errorf("cgroups: cannot enter a %T", g)
}

// killPollInterval is how often Delete looks whether a killed group has
// emptied, for at most killWait.
const (
	killPollInterval = 5 * time.Millisecond
	killWait         = 10 * time.Second
)

// killAndWait kills g's processes until none is left or the wait ends:
// a ticker paces the rounds and a timer bounds them.
func killAndWait(g Group) error {
	tick := time.NewTicker(killPollInterval)
	defer tick.Stop()
	deadline := time.NewTimer(killWait)
	defer deadline.Stop()
	for {
		procs, err := g.Procs()
		if errors.Is(err, os.ErrNotExist) || (err == nil && len(procs) == 0) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := g.Kill(); err != nil {
			return err
		}
		select {
		case <-deadline.C:
			return fmt.Errorf("%w: %s: pids %v", ErrNotEmpty, g.Path(), procs)
		case <-tick.C:
		}
	}
}

// parentDirs are the directories of the parent: one per v1 hierarchy,
// the one below the unified mount on v2.
func (m *Manager) parentDirs() ([]string, error) {
	if m.mode == ModeV2 {
		return []string{filepath.Join(m.root, m.parent)}, nil
	}
	subs, err := v1Hierarchy()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range subs {
		if p, ok := s.(interface{ Path(string) string }); ok {
			out = append(out, p.Path(m.parent))
		}
	}
	return out, nil
}

// Groups lists the names of the groups below the parent (in any v1
// hierarchy); none when the parent does not exist yet.
func (m *Manager) Groups() ([]string, error) {
	dirs, err := m.parentDirs()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if e.IsDir() && !slices.Contains(out, e.Name()) {
				out = append(out, e.Name())
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// RemoveParent deletes every group below the parent (killing what runs
// in them) and then the parent itself; a parent already gone is no error.
// gone reports whether err says a group was removed under the caller.
func gone(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENODEV)
}

func (m *Manager) RemoveParent() error {
	names, err := m.Groups()
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		g, err := m.Load(m.PathOf(n))
		if err == nil {
			err = g.Delete()
		}
		// A group its owner removes meanwhile (a task's teardown still
		// running) is gone: its files answer ENODEV, then ENOENT.
		if gone(err) {
			continue
		}
		errs = append(errs, err)
	}
	dirs, err := m.parentDirs()
	if err != nil {
		return err
	}
	if m.parent != "/" {
		for _, d := range dirs {
			if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
