package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/agent"
)

// keyringCLI runs `troupe operator gossip keyring args...` against a over
// HTTPS with the test's CLI certificate.
func (tc *tlsCluster) keyringCLI(t *testing.T, a *agentProc, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	argv := append([]string{"operator", "gossip", "keyring", "-address", "https://" + a.Host.AddrPort(httpPort),
		"-ca-cert", tc.cli.CAFile, "-client-cert", tc.cli.CertFile, "-client-key", tc.cli.KeyFile,
		"-tls-server-name", "server.global.nomad"}, args...)
	out, err := exec.CommandContext(ctx, troupeBin, argv...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	require.NoError(t, err, "troupe %v", argv)
	return string(out), 0
}

// allAlive says whether every server sees the 3 servers alive and both
// clients are ready nodes.
func (tc *tlsCluster) allAlive() (bool, string) {
	for _, s := range tc.servers {
		states, err := memberStates(s)
		if err != nil {
			return false, fmt.Sprintf("%s: %v", s.Name, err)
		}
		if strings.Count(states, "=alive") != len(tc.servers) {
			return false, fmt.Sprintf("%s sees %s", s.Name, states)
		}
	}
	nodes, err := tc.nodes()
	if err != nil {
		return false, err.Error()
	}
	for _, n := range nodes {
		if n.Status != "ready" {
			return false, describeNodes(nodes)
		}
	}
	return len(nodes) == len(tc.clients), describeNodes(nodes)
}

// requireAliveFor fails if any member stops being alive within d.
func (tc *tlsCluster) requireAliveFor(t *testing.T, d time.Duration, step string) {
	t.Helper()
	var why string
	require.Never(t, func() bool {
		var ok bool
		ok, why = tc.allAlive()
		return !ok
	}, d, pollEvery, "after %s a member is not alive", step)
	t.Logf("after %s: %s", step, why)
}

// TestClusterGossipKeyRotation: on 3 servers and 2 clients with mutual TLS
// and encrypted gossip, `operator gossip keyring` installs a new key, makes
// it the primary one and removes the old, each on every member through
// one server, while every member stays alive and every client ready;
// removing the primary key is refused; a restarted server reads the
// rotated keys from its keyring file (its -encrypt key is gone from the
// cluster) and rejoins.
func TestClusterGossipKeyRotation(t *testing.T) {
	k1, err := agent.NewGossipKey()
	require.NoError(t, err)
	k2, err := agent.NewGossipKey()
	require.NoError(t, err)
	tc := startTLSAgents(t, 3, 2, []string{"-encrypt", k1})
	s := tc.servers[1]

	out, code := tc.keyringCLI(t, s, "-list")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, k1+" [5/5]")

	for _, step := range []struct{ op, key string }{{"-install", k2}, {"-use", k2}, {"-remove", k1}} {
		out, code := tc.keyringCLI(t, s, step.op, step.key)
		require.Equal(t, 0, code, "%s: %s", step.op, out)
		require.Contains(t, out, "5 nodes", step.op)
		tc.requireAliveFor(t, 2*time.Second, step.op)
	}
	out, code = tc.keyringCLI(t, tc.servers[0], "-list")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, k2+" [5/5]")
	require.NotContains(t, out, k1)

	out, code = tc.keyringCLI(t, s, "-remove", k2)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "removing the primary key is not allowed")
	out, code = tc.keyringCLI(t, s, "-install", "not-base64!")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "400")

	restarted := tc.servers[2]
	restarted.Kill(t)
	restarted = tc.restart(t, restarted)
	tc.eventually(t, formTimeout, "the restarted server rejoins with the rotated key", tc.allAlive)
	out, code = tc.keyringCLI(t, restarted, "-list")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, k2+" [5/5]")
}
