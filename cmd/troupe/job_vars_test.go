package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/agent"
)

// startServerAgent starts a real server-only agent (no client: jobs
// register and stay pending) and answers its HTTP address.
func startServerAgent(t *testing.T) string {
	cfg := agent.DefaultConfig()
	cfg.Client = false
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.Logger = slog.New(slog.DiscardHandler)
	return "http://" + startTestAgent(t, cfg).HTTPAddr()
}

// startTestAgent starts an agent of cfg, stopped when the test ends, and
// waits until it has a leader.
func startTestAgent(t *testing.T, cfg *agent.Config) *agent.Agent {
	t.Helper()
	a, err := agent.New(cfg)
	require.NoError(t, err)
	require.NoError(t, a.Start())
	t.Cleanup(func() { _ = a.Shutdown() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, a.WaitLeader(ctx))
	return a
}

const varsJobFile = `variable "cmd" {
  type = string
}

variable "cpu" {
  type    = number
  default = 20
}

job "vars" {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver = "exec"
      config {
        command = var.cmd
      }
      resources {
        cpu    = var.cpu
        memory = 16
      }
    }
  }
}
`

// TestJobRunSendsSubmission: `troupe job run FILE -var ...` registers the
// job its variables make, with the file's exact text and the variables as
// its submission, which Nomad's client reads back; a JSON job's is "json".
func TestJobRunSendsSubmission(t *testing.T) {
	addr := startServerAgent(t)
	c, err := nomad.NewClient(&nomad.Config{Address: addr})
	require.NoError(t, err)
	path := writeFile(t, "vars.nomad.hcl", varsJobFile)
	varFile := writeFile(t, "vars.hcl", "cpu = 30\n")
	var stdout, stderr bytes.Buffer
	code := run([]string{"job", "run", "-address", addr, "-detach", path, "-var", "cmd=/bin/echo", "-var-file", varFile}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())

	job, _, err := c.Jobs().Info("vars", nil)
	require.NoError(t, err)
	require.Equal(t, "/bin/echo", job.TaskGroups[0].Tasks[0].Config["command"], "the -var is applied")
	require.Equal(t, 30, *job.TaskGroups[0].Tasks[0].Resources.CPU, "the var-file is applied")
	sub, _, err := c.Jobs().Submission("vars", 0, nil)
	require.NoError(t, err)
	require.Equal(t, &nomad.JobSubmission{Source: varsJobFile, Format: "hcl2",
		VariableFlags: map[string]string{"cmd": "/bin/echo"}, Variables: "cpu = 30\n"}, sub)

	// A -var the file does not declare is refused before anything registers.
	code = run([]string{"job", "run", "-address", addr, "-detach", "-var", "cmd=x", "-var", "nope=1", path}, &stdout, &stderr)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr.String(), `declares no variable "nope"`)
	versions, _, _, err := c.Jobs().Versions("vars", false, nil)
	require.NoError(t, err)
	require.Len(t, versions, 1, "nothing registered")

	jsonJob := `{"Job": {"ID": "vars", "Name": "vars", "Type": "service", "Datacenters": ["dc1"],
  "TaskGroups": [{"Name": "g", "Count": 2, "Tasks": [{"Name": "t", "Driver": "exec",
    "Config": {"command": "/bin/true"}, "Resources": {"CPU": 20, "MemoryMB": 16}}]}]}}`
	code = run([]string{"job", "run", "-address", addr, "-detach", writeFile(t, "vars.json", jsonJob)}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	sub, _, err = c.Jobs().Submission("vars", 1, nil)
	require.NoError(t, err)
	require.Equal(t, &nomad.JobSubmission{Source: jsonJob, Format: "json"}, sub)
	require.True(t, strings.HasPrefix(sub.Source, `{"Job"`))
}
