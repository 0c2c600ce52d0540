package agent

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
)

// TestZeroValuesSurviveParseAndRegister follows the CLI's path (HCL parsed
// by the server, registered back): explicit zeros must not turn into
// defaults on the way.
func TestZeroValuesSurviveParseAndRegister(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := api.NewClient(&api.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	job, err := c.Jobs().ParseHCL(`job "zero" {
  group "g" {
    count = 0
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/true"
      }
    }
  }
}`, true)
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stored := a.Store().Snapshot().JobByID("default", "zero")
	require.NotNil(t, stored)
	g := stored.GetTaskGroups()[0]
	require.Equal(t, int32(0), g.GetCount())
	require.Equal(t, int32(0), g.GetRestartPolicy().GetAttempts())
	require.Equal(t, int32(0), g.GetTasks()[0].GetRestartPolicy().GetAttempts())
}
