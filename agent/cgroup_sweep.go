package agent

import (
	"errors"
	"os"
	"strings"

	"github.com/hashicorp/go-uuid"

	"github.com/troupe-dev/troupe/runtime/cgroups"
)

// sweepCgroups kills and removes, once the client restored its
// allocations, the task groups below the agent's cgroup parent that
// belong to no allocation the client still knows: what an agent that
// died (or was killed) between a task's start and its teardown left,
// whose processes would otherwise run and hold memory for ever. A group
// is a task's when its name is Nomad's "<allocID>.<task>" (".scope" on
// v2); other directories below the parent are left alone.
func (a *Agent) sweepCgroups(live func(allocID string) bool) {
	m, err := cgroups.New(a.cfg.CgroupParent)
	if errors.Is(err, cgroups.ErrUnavailable) {
		return
	}
	if err != nil {
		a.log.Warn("cgroup sweep", "error", err)
		return
	}
	names, err := m.Groups()
	if err != nil {
		a.log.Warn("cgroup sweep: listing task groups", "parent", m.PathOf(""), "error", err)
		return
	}
	for _, name := range names {
		allocID, ok := groupAlloc(name)
		if !ok || live(allocID) {
			continue
		}
		g, err := m.Load(m.PathOf(name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil {
			err = g.Delete()
		}
		if err != nil {
			a.log.Warn("cgroup sweep: removing an orphaned task group", "group", m.PathOf(name), "error", err)
			continue
		}
		a.log.Info("cgroup sweep: killed and removed the group of an allocation this client no longer has",
			"group", m.PathOf(name), "alloc", allocID)
	}
}

// groupAlloc is the allocation ID of a task group's name
// ("<uuid>.<task>", ".scope" on v2).
func groupAlloc(name string) (string, bool) {
	id, task, ok := strings.Cut(name, ".")
	if !ok || task == "" || task == "scope" {
		return "", false
	}
	if _, err := uuid.ParseUUID(id); err != nil {
		return "", false
	}
	return id, true
}
