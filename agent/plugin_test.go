package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// TestCSIPluginJobIsFingerprinted runs the hostpath CSI plugin as a job
// (a task with a csi_plugin block): the client finds its socket through
// CSI_ENDPOINT, fingerprints it over real gRPC, and the plugin shows one
// healthy controller and one healthy node; stopping the job removes them.
func TestCSIPluginJobIsFingerprinted(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "troupe-csi-hostpath")
	_, file, _, _ := runtime.Caller(0)
	build := exec.Command("go", "build", "-o", bin, "./cmd/troupe-csi-hostpath")
	build.Dir = filepath.Join(filepath.Dir(file), "..")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	cfg := testConfig(t, t.TempDir())
	cfg.PluginProbeInterval = 100 * time.Millisecond
	a := startAgent(t, cfg)
	defer a.Shutdown()
	c, err := api.NewClient(&api.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	job, err := c.Jobs().ParseHCL(`job "plugin" {
  group "p" {
    task "hostpath" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "exec `+bin+` -endpoint \"$CSI_ENDPOINT\" -root \"$NOMAD_TASK_DIR/volumes\" -node-id \"$NOMAD_ALLOC_NODE_ID\" -mode monolith"]
      }
      csi_plugin {
        id        = "hostpath"
        type      = "monolith"
        mount_dir = "/csi"
      }
      kill_timeout = "2s"
    }
  }
}`, true)
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)

	healthy := func() bool {
		p := a.Store().Snapshot().CSIPluginByID("hostpath")
		return p != nil && p.ControllersHealthy == 1 && p.NodesHealthy == 1
	}
	deadline := time.Now().Add(30 * time.Second)
	for !healthy() && time.Now().Before(deadline) {
		a.Store().Wait(t.Context(), a.Store().Snapshot().Index(), "csi_plugins")
	}
	if !healthy() {
		logs, _ := filepath.Glob(filepath.Join(a.AllocDir(), "*", "alloc", "logs", "hostpath.std*"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", l, b)
		}
		t.Fatalf("the plugin never became healthy: %v", a.Store().Snapshot().CSIPluginByID("hostpath"))
	}
	p, _, err := c.Plugins().Info("hostpath", nil)
	require.NoError(t, err)
	in := p.Nodes[a.Node().GetID()]
	require.NotNil(t, in)
	require.Equal(t, "hostpath.troupe.dev", in.Provider)
	require.Equal(t, a.Node().GetID(), in.NodeInfo.GetID())
	require.True(t, p.Controllers[a.Node().GetID()].GetControllerInfo().GetSupportsCreateDelete())

	// A volume of a healthy plugin is schedulable.
	_, err = c.Volumes().Register(&messages.CSIVolume{ID: "vol1", Name: "vol1", ExternalID: "vol1", PluginID: "hostpath",
		RequestedCapabilities: []*messages.CSIVolumeCapability{{AccessMode: "single-node-writer", AttachmentMode: "file-system"}}}, nil)
	require.NoError(t, err)
	vol, _, err := c.Volumes().Info("vol1", nil)
	require.NoError(t, err)
	require.True(t, vol.Schedulable)
	require.Equal(t, int32(1), vol.NodesHealthy)

	_, _, err = c.Jobs().Deregister("plugin", false, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		p := a.Store().Snapshot().CSIPluginByID("hostpath")
		return p == nil || (p.ControllersHealthy == 0 && p.NodesHealthy == 0 && len(p.Nodes) == 0)
	}, 30*time.Second, 50*time.Millisecond, "the stopped plugin's instances stayed")
	vol, _, err = c.Volumes().Info("vol1", nil)
	require.NoError(t, err)
	require.False(t, vol.Schedulable, "no plugin, no placements")
}
