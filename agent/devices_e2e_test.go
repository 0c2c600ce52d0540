package agent

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/internal/syncbuf"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/device"
	"github.com/troupe-dev/troupe/runtime/device/nvidia"
	"github.com/troupe-dev/troupe/runtime/device/nvidia/nvmltest"
)

// gpuJob asks for gpus GPUs per allocation with at least 40 GB each; its
// exec task writes the GPU variables troupe gave it and keeps running,
// holding its GPUs.
func gpuJob(id string, count, gpus int) string {
	return fmt.Sprintf(`job %q {
  group "g" {
    count = %d
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"$NVIDIA_VISIBLE_DEVICES $CUDA_VISIBLE_DEVICES\" > $NOMAD_TASK_DIR/gpus; while true; do sleep 1; done"]
      }
      kill_timeout = "1s"
      resources {
        cpu    = 20
        memory = 16
        device "nvidia/gpu" {
          count = %d
          constraint {
            attribute = "${device.attr.memory_mib}"
            operator  = ">="
            value     = "40000"
          }
        }
      }
    }
  }
}`, id, count, gpus)
}

// TestGPUsFingerprintedPlacedAndGiven runs an agent whose NVIDIA plugin
// talks to go-nvml's DGX H100 mock (8 GPUs): the node shows the GPUs,
// four allocations of 2 GPUs each get distinct GPUs and exactly those in
// their environment, and a fifth cannot be placed.
func TestGPUsFingerprintedPlacedAndGiven(t *testing.T) {
	mock := nvmltest.NewDGXH100()
	cfg := testConfig(t, t.TempDir())
	cfg.DevicePlugins = []device.Plugin{nvidia.New(nvidia.Config{NVML: mock, Logger: testLogger(t)})}
	a := startAgent(t, cfg)
	defer a.Shutdown()
	c, err := api.NewClient(&api.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	n := a.Store().Snapshot().NodeByID(a.Node().GetID())
	require.Len(t, n.GetNodeResources().GetDevices(), 1)
	group := n.GetNodeResources().GetDevices()[0]
	require.Equal(t, "nvidia", group.GetVendor())
	require.Equal(t, "gpu", group.GetType())
	require.Contains(t, group.GetName(), "H100")
	require.Len(t, group.GetInstances(), 8)
	uuids := map[string]int{}
	for i, in := range group.GetInstances() {
		require.True(t, in.GetHealthy())
		uuids[in.GetID()] = i
	}

	job, err := c.Jobs().ParseHCL(gpuJob("train", 5, 2), true)
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	var done []*messages.Allocation
	require.Eventually(t, func() bool {
		done = done[:0]
		for _, al := range a.Store().Snapshot().AllocsByJob("default", "train") {
			if al.GetClientStatus() == "running" {
				done = append(done, al)
			}
		}
		return len(done) == 4
	}, 30*time.Second, 20*time.Millisecond, "four allocations of two GPUs should run")
	seen := map[string]bool{}
	for _, al := range done {
		devs := al.GetAllocatedResources().GetTasks()["t"].GetDevices()
		require.Len(t, devs, 1)
		ids := devs[0].GetDeviceIDs()
		require.Len(t, ids, 2)
		for _, id := range ids {
			require.False(t, seen[id], "GPU %s given twice", id)
			seen[id] = true
		}
		var b []byte
		require.Eventually(t, func() bool {
			b, err = os.ReadFile(filepath.Join(a.AllocDir(), al.GetID(), "t", "local", "gpus"))
			return err == nil && len(strings.Fields(string(b))) == 2
		}, 10*time.Second, 10*time.Millisecond)
		fields := strings.Fields(string(b))
		require.Len(t, fields, 2, "the task saw: %q", b)
		require.ElementsMatch(t, ids, strings.Split(fields[0], ","), "NVIDIA_VISIBLE_DEVICES")
		var idx []string
		for _, id := range ids {
			idx = append(idx, fmt.Sprint(uuids[id]))
		}
		slices.Sort(idx)
		require.Equal(t, strings.Join(idx, ","), fields[1], "CUDA_VISIBLE_DEVICES is the host indices")
	}
	require.Len(t, seen, 8)
	ev := a.Store().Snapshot().EvalsByJob("default", "train")
	var reasons []string
	for _, e := range ev {
		for _, m := range e.GetFailedTGAllocs() {
			for k := range m.GetDimensionExhausted() {
				reasons = append(reasons, k)
			}
		}
	}
	require.NotEmpty(t, reasons, "the fifth allocation is refused for lack of GPUs")
	require.Contains(t, strings.Join(reasons, ";"), "devices")
}

// TestAgentWithoutNVML: on a host without the NVIDIA library (this one,
// and CI) the agent starts, its node has no devices, and it says why once.
func TestAgentWithoutNVML(t *testing.T) {
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("this host has an NVIDIA driver")
	}
	var logs syncbuf.Buffer
	cfg := testConfig(t, t.TempDir())
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	a := startAgent(t, cfg)
	defer a.Shutdown()
	require.Empty(t, a.Store().Snapshot().NodeByID(a.Node().GetID()).GetNodeResources().GetDevices())
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "libnvidia-ml") }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, 1, strings.Count(logs.String(), "libnvidia-ml"), "one line, not one per fingerprint:\n%s", logs.String())
}
