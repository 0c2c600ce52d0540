package agent

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
)

// TestTaskArgsAreInterpolated runs a real exec task whose args refer to
// its allocation, the node and the node's attributes and meta, the way
// Nomad jobs do, and reads what the task wrote.
func TestTaskArgsAreInterpolated(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Meta = map[string]string{"rack": "r7"}
	a := startAgent(t, cfg)
	defer a.Shutdown()
	c, err := api.NewClient(&api.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	job, err := c.Jobs().ParseHCL(`job "interp" {
  type = "batch"
  group "g" {
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo ${NOMAD_ALLOC_ID} ${node.unique.id} ${node.unique.name} ${node.datacenter} ${attr.cpu.arch} ${meta.rack} $${WHO} ${env.NOMAD_JOB_ID} ${meta["rack"]} > ${NOMAD_TASK_DIR}/out"]
      }
      env {
        WHO = "${node.unique.name}-${NOMAD_GROUP_NAME}"
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`, true)
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)

	var allocID string
	require.Eventually(t, func() bool {
		for _, al := range a.Store().Snapshot().AllocsByJob("default", "interp") {
			if al.GetClientStatus() == "complete" {
				allocID = al.GetID()
				return true
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond, "the batch job never completed")
	out, err := os.ReadFile(filepath.Join(a.AllocDir(), allocID, "t", "local", "out"))
	require.NoError(t, err)
	arch := a.Store().Snapshot().NodeByID(a.Node().GetID()).GetAttributes()["cpu.arch"]
	require.Equal(t, runtime.GOARCH, arch)
	require.Equal(t, strings.Join([]string{allocID, a.Node().GetID(), "test-node", cfg.Datacenter, arch, "r7",
		"test-node-g", "interp", "r7"}, " "), strings.TrimSpace(string(out)),
		"$${WHO} is the shell's: the env block's WHO, itself interpolated")
}
