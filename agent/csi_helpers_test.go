package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi/hostpath"
)

var (
	hostpathOnce sync.Once
	hostpathBin  string
	hostpathErr  error
)

// hostpathPlugin builds cmd/troupe-csi-hostpath once per test binary.
func hostpathPlugin(t testing.TB) string {
	t.Helper()
	hostpathOnce.Do(func() {
		dir, err := os.MkdirTemp("", "troupe-csi-bin-")
		if err != nil {
			hostpathErr = err
			return
		}
		hostpathBin = filepath.Join(dir, "troupe-csi-hostpath")
		_, file, _, _ := runtime.Caller(0)
		build := exec.Command("go", "build", "-o", hostpathBin, "./cmd/troupe-csi-hostpath")
		build.Dir = filepath.Join(filepath.Dir(file), "..")
		if out, err := build.CombinedOutput(); err != nil {
			hostpathErr = fmt.Errorf("%w: %s", err, out)
		}
	})
	require.NoError(t, hostpathErr)
	return hostpathBin
}

// requireRoot skips a test that mounts when it is not run as root, except
// in CI, where it must run.
func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("this test mounts volumes and must run as root in CI")
	}
	t.Skip("skipping: mounting CSI volumes needs root")
}

// pluginEnv is a hostpath plugin running as a job on an agent.
type pluginEnv struct {
	a    *Agent
	c    *api.Client
	root string            // where the plugin keeps its volumes
	ctl  *hostpath.Control // the plugin's fault and call-record API
}

// startPluginJob starts an agent (cfg may be tuned by the caller) and the
// hostpath plugin as job "plugin", and waits until the plugin is healthy.
func startPluginJob(t testing.TB, cfg *Config) *pluginEnv {
	t.Helper()
	requireRoot(t)
	bin := hostpathPlugin(t)
	cfg.PluginProbeInterval = 100 * time.Millisecond
	a := startAgent(t, cfg)
	t.Cleanup(func() { _ = a.Shutdown() })
	c, err := api.NewClient(&api.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	dir, err := os.MkdirTemp("", "csi-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	env := &pluginEnv{a: a, c: c, root: filepath.Join(dir, "vols"), ctl: hostpath.NewControl(filepath.Join(dir, "ctl.sock"))}
	job, err := c.Jobs().ParseHCL(fmt.Sprintf(`job "plugin" {
  group "p" {
    task "hostpath" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "exec %s -endpoint \"$CSI_ENDPOINT\" -root %s -control %s -node-id \"$NOMAD_ALLOC_NODE_ID\" -mode monolith"]
      }
      csi_plugin {
        id        = "hostpath"
        type      = "monolith"
        mount_dir = "/csi"
      }
      kill_timeout = "2s"
    }
  }
}`, bin, env.root, filepath.Join(dir, "ctl.sock")), true)
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		p := a.Store().Snapshot().CSIPluginByID("hostpath")
		return p != nil && p.ControllersHealthy == 1 && p.NodesHealthy == 1
	}, 30*time.Second, 20*time.Millisecond, "the hostpath plugin never became healthy")
	return env
}

// create makes volumes through the controller (`volume create`).
func (e *pluginEnv) create(t testing.TB, ids ...string) {
	t.Helper()
	for _, id := range ids {
		resp, err := e.a.VolumeOp(t.Context(), &messages.VolumeOpRequest{Op: "create", VolumeID: id,
			Volume: &messages.CSIVolume{ID: id, Name: id, PluginID: "hostpath", Namespace: "default",
				RequestedCapabilities: []*messages.CSIVolumeCapability{{AccessMode: "single-node-writer", AttachmentMode: "file-system"}}}})
		require.NoError(t, err)
		require.Nil(t, resp.GetError(), "create %s: %v", id, resp.GetError())
	}
}

// volume reads a volume from the local replica.
func (e *pluginEnv) volume(id string) *messages.CSIVolume {
	return e.a.Store().Snapshot().CSIVolumeAnyNamespace(id)
}

// waitFreed waits until no volume of ids has a claim left.
func (e *pluginEnv) waitFreed(t testing.TB, ids ...string) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, id := range ids {
			if len(e.volume(id).GetClaims()) > 0 {
				return false
			}
		}
		return true
	}, 60*time.Second, 20*time.Millisecond, "claims were never freed")
}

// calls returns the plugin's call records of the given methods.
func (e *pluginEnv) calls(t testing.TB, methods ...string) []hostpath.Call {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	all, err := e.ctl.Calls(ctx)
	require.NoError(t, err)
	var out []hostpath.Call
	for _, c := range all {
		if slices.Contains(methods, c.Method) {
			out = append(out, c)
		}
	}
	return out
}

// maxOverlap is the most calls that ran at once.
func maxOverlap(calls []hostpath.Call) int {
	most := 0
	for _, c := range calls {
		n := 0
		for _, o := range calls {
			if !o.Start.After(c.Start) && o.End.After(c.Start) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// volumeJob is a job whose group mounts the CSI volumes named in sources
// (volume "v0" { source = sources[0] } ...), each at /v<i>, and whose task
// writes its allocation ID into each and then waits.
func volumeJob(id string, count int, perAlloc bool, sources ...string) string {
	var vols, mounts, writes strings.Builder
	for i, src := range sources {
		fmt.Fprintf(&vols, `    volume "v%d" {
      type            = "csi"
      source          = %q
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
      per_alloc       = %t
    }
`, i, src, perAlloc)
		fmt.Fprintf(&mounts, "      volume_mount {\n        volume      = \"v%d\"\n        destination = \"/v%d\"\n      }\n", i, i)
		fmt.Fprintf(&writes, `echo $NOMAD_ALLOC_ID > /v%d/written; `, i)
	}
	return fmt.Sprintf(`job %q {
  group "g" {
    count = %d
%s    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "%s while true; do sleep 0.2; done"]
      }
%s      kill_timeout = "2s"
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`, id, count, vols.String(), writes.String(), mounts.String())
}

// run registers an HCL job.
func (e *pluginEnv) run(t testing.TB, hcl string) string {
	t.Helper()
	job, err := e.c.Jobs().ParseHCL(hcl, true)
	require.NoError(t, err)
	_, _, err = e.c.Jobs().Register(job, nil)
	require.NoError(t, err)
	return job.GetID()
}

// allocs returns the job's allocations with the given client status.
func (e *pluginEnv) allocs(jobID, status string) []*messages.Allocation {
	var out []*messages.Allocation
	for _, al := range e.a.Store().Snapshot().AllocsByJob("default", jobID) {
		if al.GetClientStatus() == status {
			out = append(out, al)
		}
	}
	return out
}

// waitRunning waits until n allocations of the job run.
func (e *pluginEnv) waitRunning(t testing.TB, jobID string, n int) []*messages.Allocation {
	t.Helper()
	require.Eventually(t, func() bool { return len(e.allocs(jobID, "running")) == n }, 60*time.Second,
		20*time.Millisecond, "allocations of %s never ran", jobID)
	return e.allocs(jobID, "running")
}
