package agent

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"testing"

	"github.com/troupe-dev/troupe/runtime/cgroups"
)

// testCgroupParent gives a test's agent a cgroup parent of its own, by
// test and data dir (the same for an agent restarted on the same data
// dir: it finds its tasks' groups), so that agents running at the same
// time, in one test or in several, never see or sweep each other's
// groups; it is removed, with whatever is left in it, when the test ends
// (after its agents stopped).
func testCgroupParent(t testing.TB, cfg *Config) {
	h := fnv.New32a()
	h.Write([]byte(t.Name() + "\x00" + cfg.DataDir))
	cfg.CgroupParent = fmt.Sprintf("/troupe-test-%d-%08x", os.Getpid(), h.Sum32())
	if os.Geteuid() != 0 || cgroups.Detect() == cgroups.ModeNone {
		return
	}
	parent := cfg.CgroupParent
	t.Cleanup(func() {
		m, err := cgroups.New(parent)
		if err != nil {
			return
		}
		if err := m.RemoveParent(); err != nil {
			t.Errorf("removing the test's cgroup parent %s: %v", parent, err)
		}
	})
}

// taskCgroupDir is the directory of an allocation's task's group in the
// v1 hierarchy of controller, below the agent's cgroup parent.
func taskCgroupDir(a *Agent, controller, allocID, task string) string {
	return filepath.Join("/sys/fs/cgroup", controller, a.cfg.CgroupParent,
		cgroups.GroupName(cgroups.ModeV1, allocID, task))
}
