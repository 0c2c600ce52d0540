package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDevAgentRunsExampleJob is the README's tour: a dev agent, the example
// job planned and run with the CLI's monitor, its status, its logs, the
// actor tree.
func TestDevAgentRunsExampleJob(t *testing.T) {
	a := startDevAgent(t)

	out, code := a.troupe(t, "job", "plan", "examples/hello.hcl")
	require.Equal(t, 1, code, "a plan that creates allocations exits 1: %s", out)
	require.Contains(t, out, `+ Job: "hello"`)
	require.Regexp(t, `Task Group: "hello" \(1 create\)`, out)
	require.Contains(t, out, "troupe job run -check-index 0 examples/hello.hcl")

	out, code = a.troupe(t, "job", "run", "-check-index", "0", "examples/hello.hcl")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, `Monitoring evaluation`)
	require.Contains(t, out, `Evaluation status changed: "pending" -> "complete"`)
	require.Regexp(t, `Allocation "[0-9a-f]{8}" created: node "[0-9a-f]{8}", group "`, out)
	require.Contains(t, out, `"running"`)
	allocID := regexp.MustCompile(`Allocation "([0-9a-f]{8})" created`).FindStringSubmatch(out)[1]

	out, code = a.troupe(t, "job", "status", "hello")
	require.Equal(t, 0, code, out)
	require.Regexp(t, `(?m)^ID\s+= hello$`, out)
	require.Regexp(t, `(?m)^Status\s+= running$`, out)
	require.Regexp(t, allocID+`\s+[0-9a-f]{8}\s+\S+\s+0\s+run\s+running`, out)

	require.Eventually(t, func() bool {
		out, code = a.troupe(t, "alloc", "logs", allocID)
		return code == 0 && strings.Contains(out, "hello from troupe 2")
	}, 20*time.Second, 100*time.Millisecond, "logs never showed the loop: %s", out)

	out, code = a.troupe(t, "job", "plan", "examples/hello.hcl")
	require.Equal(t, 0, code, "an unchanged job changes nothing: %s", out)
	require.Regexp(t, `Task Group: "hello" \(1 ignore\)`, out)
	out, code = a.troupe(t, "job", "run", "-detach", "-check-index", "0", "examples/hello.hcl")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "409")

	out, code = a.troupe(t, "actors")
	require.Equal(t, 0, code, out)
	for _, want := range []string{"server", "scheduler", "client", "allocs/" + allocID, "tasks/"} {
		require.Contains(t, out, want)
	}

	out, code = a.troupe(t, "node", "status")
	require.Equal(t, 0, code, out)
	require.Regexp(t, `ready`, out)

	out, code = a.troupe(t, "job", "stop", "hello")
	require.Equal(t, 0, code, out)
	require.Eventually(t, func() bool {
		out, _ = a.troupe(t, "alloc", "status", allocID)
		return regexp.MustCompile(`(?m)^Client Status\s+= complete$`).MatchString(out)
	}, 20*time.Second, 100*time.Millisecond, "alloc never completed: %s", out)
}

// TestPlacementFailureExplained runs a job no node can hold: the monitor
// exits 2 and says which resource filtered how many nodes.
func TestPlacementFailureExplained(t *testing.T) {
	a := startDevAgent(t)
	out, code := a.troupe(t, "job", "run", "examples/too-big.hcl")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, `failed to place 1 allocation`)
	require.Contains(t, out, `Dimension "memory" exhausted on 1 nodes`)
}
