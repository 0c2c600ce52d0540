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
func rolloutHCL(id, onFailure string, westFails bool) string {
	westMeta := ""
	if westFails {
		westMeta = "\n      meta {\n        fail = \"1\"\n      }"
	}
	return fmt.Sprintf(`job %[1]q {
  datacenters = ["dc1"]
  type = "service"
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
`, id, onFailure, westMeta)
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
//   - fail_all: west fails, and east's blocked deployment fails with it.
func TestClusterMultiregionRollout(t *testing.T) {
	f := startFederation(t)
	eastS, westS := f.east.server(), f.west.server()
	f.east.eventually(t, formTimeout, "both regions known", func() (bool, string) {
		regions, err := eastS.API.Regions().List()
		return err == nil && len(regions) == 2, fmt.Sprint(regions, err)
	})
	run := func(t *testing.T, id, onFailure string, westFails bool) {
		path := filepath.Join(t.TempDir(), id+".hcl")
		require.NoError(t, os.WriteFile(path, []byte(rolloutHCL(id, onFailure, westFails)), 0o644))
		out, code := f.east.cli(t, eastS, "job run", "-detach", path)
		require.Equal(t, 0, code, out)
	}
	eastC, westC := nomadClient(t, eastS), nomadClient(t, westS)
	both := func(id string) (*nomad.Deployment, *nomad.Deployment, string) {
		e, w := rolloutDeployment(eastC, id), rolloutDeployment(westC, id)
		return e, w, fmt.Sprintf("east %s, west %s", statusOf(e), statusOf(w))
	}

	t.Run("in order", func(t *testing.T) {
		run(t, "mr-order", "", false)
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
		run(t, "mr-local", "fail_local", true)
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

	t.Run("fail_all fails east too", func(t *testing.T) {
		run(t, "mr-all", "fail_all", true)
		f.east.eventually(t, 2*time.Minute, "both failed", func() (bool, string) {
			e, w, why := both("mr-all")
			return statusOf(e) == "failed" && statusOf(w) == "failed", why
		})
		e, _, _ := both("mr-all")
		require.Equal(t, "Failed because of an error in peer region", e.StatusDescription)
	})
}
