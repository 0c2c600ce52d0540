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

// TestCoresAndCPURefused: a task asks for cpu or cores, not both (as
// Nomad refuses it); cores alone get no default cpu.
func TestCoresAndCPURefused(t *testing.T) {
	hcl := `job "j" {
  group "g" {
    task "t" {
      driver = "exec"
      config { command = "true" }
      resources {
        cpu    = 500
        cores  = 1
        memory = 64
      }
    }
  }
}`
	j, err := Parse("j.hcl", []byte(hcl))
	require.NoError(t, err)
	Canonicalize(j)
	require.ErrorContains(t, Validate(j), `group "g": task "t": resources: a task can ask for cpu or cores, not both (cpu 500, cores 1)`)

	js := `{"Job": {"ID": "j", "Name": "j", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "exec",
	  "Config": {"command": "true"}, "Resources": {"CPU": 100, "Cores": 1, "MemoryMB": 64}}]}]}}`
	j, err = ParseJSON([]byte(js))
	require.NoError(t, err)
	Canonicalize(j)
	require.ErrorContains(t, Validate(j), "not both")

	js = `{"Job": {"ID": "j", "Name": "j", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "exec",
	  "Config": {"command": "true"}, "Resources": {"Cores": 1, "MemoryMB": 64}}]}]}}`
	j, err = ParseJSON([]byte(js))
	require.NoError(t, err)
	Canonicalize(j)
	require.NoError(t, Validate(j))
	require.Zero(t, j.GetTaskGroups()[0].GetTasks()[0].GetResources().GetCPU(), "no default cpu beside cores")
}
