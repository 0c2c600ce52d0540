//go:build linux

package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver/containerd"
	"github.com/troupe-dev/troupe/runtime/driver/containerd/ctrdtest"
)

// containerdJob is a bridge-mode containerd job serving its allocation
// ID on port 8080 from a busybox image imported from an OCI archive.
func containerdJob(id, image string) string {
	return fmt.Sprintf(`job %q {
  group "g" {
    network {
      mode = "bridge"
      port "http" { to = 8080 }
    }
    task "web" {
      driver = "containerd"
      config {
        image   = %q
        command = "/bin/busybox"
        args    = ["sh", "-c", "echo hello-from-container; mkdir -p /www; echo $NOMAD_ALLOC_ID > /www/index.html; exec /bin/busybox httpd -f -p 8080 -h /www"]
      }
      kill_timeout = "2s"
      resources {
        cpu    = 50
        memory = 64
      }
    }
  }
}`, id, image)
}

func startContainerdAgent(t *testing.T, dir string, dm *ctrdtest.Daemon) *netEnv {
	t.Helper()
	cfg := testConfig(t, dir)
	cfg.ContainerdAddress, cfg.ContainerdNamespace = dm.Address(), dm.Namespace()
	return startNetAgentWith(t, cfg)
}

// TestContainerdTaskLifecycle runs a container through the agent: bridge
// network with a mapped port, logs in the alloc dir, the driver's health
// on the node; an agent restart re-attaches to the same container; a
// reboot (containerd's state and the network state wiped) brings it back
// with a working port; stopping the job leaves no container or snapshot.
func TestContainerdTaskLifecycle(t *testing.T) {
	dm := ctrdtest.StartDaemon(t)
	archive, _ := ctrdtest.BusyboxArchive(t, t.TempDir())
	dir := t.TempDir()
	e := startContainerdAgent(t, dir, dm)
	n := e.a.Store().Snapshot().NodeByID(e.a.Node().GetID())
	require.True(t, n.GetDrivers()["containerd"].GetHealthy(), "containerd driver: %v", n.GetDrivers()["containerd"])
	require.NotEmpty(t, n.GetAttributes()["driver.containerd.version"])

	jobID := e.run(t, containerdJob("ctr", containerd.ArchiveScheme+archive))
	al := e.waitRunning(t, jobID, 1)[0]
	require.Equal(t, al.GetID(), get(t, hostPort(t, al)), "the mapped port reaches the container")
	stdout, err := e.a.TaskLogPath(al.GetID(), "web", "stdout")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Count(readLog(stdout), "hello-from-container") == 1 },
		10*time.Second, 20*time.Millisecond)
	require.Len(t, dm.Containers(t), 1)

	// Agent restart: the container keeps running and is re-attached.
	crash(t, e.a)
	e = startContainerdAgent(t, dir, dm)
	require.Eventually(t, func() bool {
		return e.a.Store().Snapshot().AllocByID(al.GetID()).GetClientStatus() == "running"
	}, 30*time.Second, 20*time.Millisecond)
	require.Equal(t, al.GetID(), get(t, hostPort(t, al)))
	require.Equal(t, 1, strings.Count(readLog(stdout), "hello-from-container"), "not started twice")

	// Reboot: containerd's tasks and state, netns files, IPAM state,
	// firewall rules and the bridge are gone.
	crash(t, e.a)
	require.NoError(t, dm.WipeState())
	e.simulateReboot(t, al.GetID())
	require.NoError(t, dm.Start())
	e = startContainerdAgent(t, dir, dm)
	require.Eventually(t, func() bool {
		return e.a.Store().Snapshot().AllocByID(al.GetID()).GetClientStatus() == "running" &&
			strings.Count(readLog(stdout), "hello-from-container") == 2
	}, 60*time.Second, 20*time.Millisecond, "the container did not come back after the reboot")
	require.Equal(t, al.GetID(), get(t, hostPort(t, al)), "the port works again")

	_, _, err = e.c.Jobs().Deregister(jobID, false, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		entries, _ := os.ReadDir(e.cfg.NetnsDir)
		return len(dm.Containers(t)) == 0 && len(dm.ActiveSnapshots(t, "overlayfs")) == 0 && len(entries) == 0
	}, 30*time.Second, 50*time.Millisecond, "containers, snapshots or namespaces left: %v %v",
		dm.Containers(t), dm.ActiveSnapshots(t, "overlayfs"))
}

// TestContainerdUnknownImage: an image that cannot be found fails the
// allocation with a message naming it and leaves nothing behind.
func TestContainerdUnknownImage(t *testing.T) {
	dm := ctrdtest.StartDaemon(t)
	e := startContainerdAgent(t, t.TempDir(), dm)
	missing := filepath.Join(t.TempDir(), "missing.tar")
	jobID := e.run(t, containerdJob("nope", containerd.ArchiveScheme+missing))
	require.Eventually(t, func() bool {
		for _, al := range e.a.Store().Snapshot().AllocsByJob("default", jobID) {
			for _, ts := range al.GetTaskStates() {
				for _, ev := range ts.GetEvents() {
					if strings.Contains(ev.GetMessage(), missing) || strings.Contains(ev.GetDisplayMessage(), missing) {
						return true
					}
				}
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond, "no task event names the missing image")
	require.Empty(t, dm.Containers(t))
	require.Empty(t, dm.ActiveSnapshots(t, "overlayfs"))
}

// TestContainerdRestartPolicyAndExitCode: a container that exits 3 is
// restarted by the group's restart policy, each exit code is reported,
// and after the last attempt the allocation fails.
func TestContainerdRestartPolicyAndExitCode(t *testing.T) {
	dm := ctrdtest.StartDaemon(t)
	archive, _ := ctrdtest.BusyboxArchive(t, t.TempDir())
	e := startContainerdAgent(t, t.TempDir(), dm)
	jobID := e.run(t, fmt.Sprintf(`job "flaky" {
  type = "batch"
  group "g" {
    restart {
      attempts = 2
      delay    = "100ms"
      interval = "1m"
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "t" {
      driver = "containerd"
      config {
        image   = %q
        command = "/bin/busybox"
        args    = ["sh", "-c", "echo run; exit 3"]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}`, containerd.ArchiveScheme+archive))
	failed := e.waitEnded(t, jobID, "failed")
	st := failed.GetTaskStates()["t"]
	require.EqualValues(t, 2, st.GetRestarts(), "two restarts, then the policy gives up")
	exits := 0
	for _, ev := range st.GetEvents() {
		if ev.GetType() == "Terminated" {
			require.EqualValues(t, 3, ev.GetExitCode())
			exits++
		}
	}
	require.Equal(t, 3, exits, "three runs, each exit code reported")
	stdout, err := e.a.TaskLogPath(failed.GetID(), "t", "stdout")
	require.NoError(t, err)
	require.Equal(t, 3, strings.Count(readLog(stdout), "run"))
}
