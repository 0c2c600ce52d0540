package jobspec

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCoresParsed: resources.cores is honoured in HCL and JSON, and a
// negative count is refused.
func TestCoresParsed(t *testing.T) {
	hcl := `job "j" {
  group "g" {
    task "t" {
      driver = "exec"
      config { command = "true" }
      resources {
        cores  = 2
        memory = 64
      }
    }
  }
}`
	j, err := Parse("j.hcl", []byte(hcl))
	require.NoError(t, err)
	require.Equal(t, int32(2), j.GetTaskGroups()[0].GetTasks()[0].GetResources().GetCores())

	js := `{"Job": {"ID": "j", "Name": "j", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "exec",
	  "Config": {"command": "true"}, "Resources": {"Cores": 1, "MemoryMB": 64}}]}]}}`
	j, err = ParseJSON([]byte(js))
	require.NoError(t, err)
	require.Equal(t, int32(1), j.GetTaskGroups()[0].GetTasks()[0].GetResources().GetCores())
}
