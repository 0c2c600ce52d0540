package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// rolloutHCL is a rolling service job over east then west, one region at
// a time (max_parallel 1), one allocation each, healthy after 4 s
// running; with westFails, west's task (meta fail = "1") exits 1 at once
// and is neither restarted nor rescheduled, so west's deployment fails.
// ver is the job's meta "ver" (a new spec in both regions); autoRevert
// the group's update.auto_revert.
func rolloutHCL(id, onFailure string, westFails bool, ver string, autoRevert bool) string {
	westMeta := ""
	if westFails {
		westMeta = "\n      meta {\n        fail = \"1\"\n      }"
	}
	return fmt.Sprintf(`job %[1]q {
  datacenters = ["dc1"]
  type = "service"
  meta {
    ver = %[4]q
  }
  multiregion {
    strategy {
      max_parallel = 1
      on_failure = %[2]q
    }
    region "east" {
      count = 1
    }
    region "west" {
      count = 1%[3]s
    }
  }
  group "g" {
    count = 1
    update {
      max_parallel = 1
      health_check = "task_states"
      min_healthy_time = "4s"
      healthy_deadline = "30s"
      progress_deadline = "60s"
      auto_revert = %[5]t
    }
    restart {
      attempts = 0
      mode = "fail"
    }
    reschedule {
      attempts = 0
      unlimited = false
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args = ["-c", "if [ \"$NOMAD_META_fail\" = 1 ]; then exit 1; fi; while true; do sleep 1; done"]
      }
      resources {
        cpu = 20
        memory = 16
      }
    }
  }
}
`, id, onFailure, westMeta, ver, autoRevert)
}

// rolloutDeployment is a region's newest deployment of job id (nil: none).
func rolloutDeployment(c *nomad.Client, id string) *nomad.Deployment {
	ds, _, err := c.Jobs().Deployments(id, false, nil)
	if err != nil || len(ds) == 0 {
		return nil
	}
	newest := ds[0]
	for _, d := range ds {
		if d.CreateIndex > newest.CreateIndex {
			newest = d
		}
	}
	return newest
}

func statusOf(d *nomad.Deployment) string {
	if d == nil {
		return "none"
	}
	return d.Status
}

// TestClusterMultiregionRollout: multiregion jobs roll out region by
// region across two federated regions (max_parallel 1, east first).
//   - In order: west's deployment stays pending, with nothing placed,
//     while east's runs; east blocks once healthy while west runs; both
//     end successful when west completes.
//   - fail_local: west fails; east stays blocked (nothing unblocks it)
//     until `troupe deployment unblock` makes it successful.
//   - fail_all: west fails, and east's blocked deployment fails with it;
//     with auto_revert both go back to the stable version before (its
//     spec registered as a new version, its allocations running).
func TestClusterMultiregionRollout(t *testing.T) {
	f := startFederation(t)
	eastS, westS := f.east.server(), f.west.server()
	f.east.eventually(t, formTimeout, "both regions known", func() (bool, string) {
		regions, err := eastS.API.Regions().List()
		return err == nil && len(regions) == 2, fmt.Sprint(regions, err)
	})
	run := func(t *testing.T, id, onFailure string, westFails bool, ver string, autoRevert bool) {
		path := filepath.Join(t.TempDir(), id+".hcl")
		require.NoError(t, os.WriteFile(path, []byte(rolloutHCL(id, onFailure, westFails, ver, autoRevert)), 0o644))
		out, code := f.east.cli(t, eastS, "job run", "-detach", path)
		require.Equal(t, 0, code, out)
	}
	eastC, westC := nomadClient(t, eastS), nomadClient(t, westS)
	both := func(id string) (*nomad.Deployment, *nomad.Deployment, string) {
		e, w := rolloutDeployment(eastC, id), rolloutDeployment(westC, id)
		return e, w, fmt.Sprintf("east %s, west %s", statusOf(e), statusOf(w))
	}

	t.Run("in order", func(t *testing.T) {
		run(t, "mr-order", "", false, "0", false)
		sawWestPending, sawEastBlocked := false, false
		f.east.eventually(t, 2*time.Minute, "east blocks while west runs", func() (bool, string) {
			e, w, why := both("mr-order")
			if statusOf(e) == "running" || statusOf(e) == "pending" {
				require.Contains(t, []string{"none", "pending"}, statusOf(w), "west started before east was done: %s", why)
				if statusOf(w) == "pending" {
					allocs, err := f.west.jobAllocs("mr-order")
					require.NoError(t, err)
					require.Empty(t, allocs, "a pending region placed allocations")
					sawWestPending = true
				}
			}
			if statusOf(e) == "blocked" && statusOf(w) == "running" {
				require.Equal(t, "Deployment is complete but waiting for peer region", e.StatusDescription)
				sawEastBlocked = true
			}
			return sawEastBlocked, why
		})
		require.True(t, sawWestPending, "west's deployment was never seen pending")
		f.east.eventually(t, 2*time.Minute, "both successful", func() (bool, string) {
			e, w, why := both("mr-order")
			return statusOf(e) == "successful" && statusOf(w) == "successful", why
		})
		f.west.waitRunning(t, "mr-order", 1, settleTimeout, onEachNode(f.west.nodeIDs(t)["west-client0"]))
	})

	t.Run("fail_local leaves east blocked for an unblock", func(t *testing.T) {
		run(t, "mr-local", "fail_local", true, "0", false)
		f.east.eventually(t, 2*time.Minute, "west fails, east blocked", func() (bool, string) {
			e, w, why := both("mr-local")
			return statusOf(e) == "blocked" && statusOf(w) == "failed", why
		})
		// Three rollout ticks later east is still blocked.
		deadline := time.Now().Add(3 * time.Second)
		for time.Now().Before(deadline) {
			e, _, why := both("mr-local")
			require.Equal(t, "blocked", statusOf(e), why)
		}
		e, _, _ := both("mr-local")
		out, code := f.east.cli(t, eastS, "deployment unblock", e.ID)
		require.Equal(t, 0, code, out)
		f.east.eventually(t, settleTimeout, "east unblocked by hand", func() (bool, string) {
			e, _, why := both("mr-local")
			return statusOf(e) == "successful", why
		})
	})

	t.Run("fail_all fails east too, and both revert", func(t *testing.T) {
		run(t, "mr-all", "fail_all", false, "0", true)
		f.east.eventually(t, 2*time.Minute, "version 0 successful in both", func() (bool, string) {
			e, w, why := both("mr-all")
			return statusOf(e) == "successful" && statusOf(w) == "successful", why
		})
		run(t, "mr-all", "fail_all", true, "1", true)
		f.east.eventually(t, 2*time.Minute, "both version 1 deployments failed", func() (bool, string) {
			e, w := versionDeployment(eastC, "mr-all", 1), versionDeployment(westC, "mr-all", 1)
			return statusOf(e) == "failed" && statusOf(w) == "failed", fmt.Sprintf("east %s, west %s", statusOf(e), statusOf(w))
		})
		e := versionDeployment(eastC, "mr-all", 1)
		require.Equal(t, "Failed because of an error in peer region - rolling back to job version 0", e.StatusDescription)
		w := versionDeployment(westC, "mr-all", 1)
		require.Equal(t, "Failed due to unhealthy allocations - rolling back to job version 0", w.StatusDescription)
		for _, r := range []struct {
			name string
			tc   *testCluster
			c    *nomad.Client
		}{{"east", f.east, eastC}, {"west", f.west, westC}} {
			r.tc.eventually(t, 2*time.Minute, r.name+" back on version 0's spec", func() (bool, string) {
				return revertedTo(r.tc, r.c, "mr-all", 2, "0")
			})
		}
	})
}

// versionDeployment is a region's deployment of job id's version v (nil:
// none).
func versionDeployment(c *nomad.Client, id string, v uint64) *nomad.Deployment {
	ds, _, err := c.Jobs().Deployments(id, false, nil)
	if err != nil {
		return nil
	}
	for _, d := range ds {
		if d.JobVersion == v {
			return d
		}
	}
	return nil
}

// revertedTo reports whether a region's job id is at version (a revert)
// with meta ver, and its allocations that run are all of that version,
// one of them at least, none of another.
func revertedTo(tc *testCluster, c *nomad.Client, id string, version uint64, ver string) (bool, string) {
	j, _, err := c.Jobs().Info(id, nil)
	if err != nil {
		return false, err.Error()
	}
	if *j.Version != version || j.Meta["ver"] != ver {
		return false, fmt.Sprintf("job version %d, meta ver %q", *j.Version, j.Meta["ver"])
	}
	allocs, err := tc.jobAllocs(id)
	if err != nil {
		return false, err.Error()
	}
	run := running(allocs)
	for _, a := range run {
		if a.JobVersion != version {
			return false, fmt.Sprintf("allocation %s of version %d runs", short(a.ID), a.JobVersion)
		}
	}
	return len(run) == 1, fmt.Sprintf("%d running allocations of version %d", len(run), version)
}
