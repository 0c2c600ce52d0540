package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// rawExecJob is a raw_exec job, as HCL.
const rawExecJob = `job "raw" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["300"]
      }
      resources {
        cpu    = 50
        memory = 16
      }
    }
  }
}
`

// TestMissingDriverExplained: on an agent without -raw-exec a raw_exec
// job is not placed, and `job run` says at once that the node lacks the
// driver (exit 2, Nomad's "missing drivers" line) and that the job waits
// in a blocked evaluation; `job status` says so too.
func TestMissingDriverExplained(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(dir, "raw.hcl")
	require.NoError(t, os.WriteFile(job, []byte(rawExecJob), 0o644))
	a := startAgentProc(t, "-server", "-client", "-data-dir", filepath.Join(dir, "data"))
	out, code := a.troupe(t, "job", "run", job)
	require.Equal(t, 2, code, out)
	require.Contains(t, out, `failed to place 1 allocation`)
	require.Contains(t, out, `Constraint "missing drivers": 1 nodes excluded by filter`)
	require.Contains(t, out, `waiting for additional capacity to place remainder`)
	out, code = a.troupe(t, "job", "status", "raw")
	require.Equal(t, 0, code, out)
	require.Regexp(t, `(?m)^Status\s+= pending$`, out)
	require.Regexp(t, `(?m)^g\s+1\s+0\s+0\s+0\s+0\s+0\s+0$`, out, "one allocation queued")
	require.Contains(t, out, "Placement Failure\nTask Group \"g\":\n  * Constraint \"missing drivers\": 1 nodes excluded by filter\n",
		"job status says why the job waits")
}

// TestDevAgentOffersRawExec: `troupe agent -dev` enables raw_exec, as
// Nomad's dev agent does, and runs a raw_exec job.
func TestDevAgentOffersRawExec(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(dir, "raw.hcl")
	require.NoError(t, os.WriteFile(job, []byte(rawExecJob), 0o644))
	a := startDevAgent(t)
	out, code := a.troupe(t, "job", "run", job)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, `finished with status "complete"`)
	out, code = a.troupe(t, "job", "stop", "-purge", "raw")
	require.Equal(t, 0, code, out)
}
