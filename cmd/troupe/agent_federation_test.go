package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/agent"
)

// TestAgentFederationSettings: region, server { retry_join } and the
// -retry-join and -wan-port flags over them.
func TestAgentFederationSettings(t *testing.T) {
	var stderr bytes.Buffer
	file := writeConfig(t, "region = \"eu\"\nserver {\n  enabled = true\n  bootstrap_expect = 3\n  retry_join = [\"10.1.0.5\", \"10.1.0.6:4650\"]\n}\n")
	cfg, _, err := parseAgentArgs([]string{"-config", file}, &stderr)
	require.NoError(t, err, stderr.String())
	require.Equal(t, "eu", cfg.Region)
	require.Equal(t, []string{"10.1.0.5", "10.1.0.6:4650"}, cfg.RetryJoin)
	require.Equal(t, agent.DefaultWANPort, cfg.WANPort)

	cfg, _, err = parseAgentArgs([]string{"-config", file, "-retry-join", "10.2.0.1", "-wan-port", "5650"}, &stderr)
	require.NoError(t, err, stderr.String())
	require.Equal(t, []string{"10.2.0.1"}, cfg.RetryJoin, "the flag replaces the file's list")
	require.Equal(t, 5650, cfg.WANPort)

	file = writeConfig(t, "server {\n  enabled = true\n  bootstrap_expect = 1\n  authoritative_region = \"global\"\n}\nacl {\n  enabled = true\n  replication_token = \"s3cret\"\n}\n")
	cfg, _, err = parseAgentArgs([]string{"-config", file}, &stderr)
	require.NoError(t, err, stderr.String())
	require.Equal(t, "global", cfg.AuthoritativeRegion)
	require.Equal(t, "s3cret", cfg.ReplicationToken)
	require.True(t, cfg.ACLEnabled)
	cfg, _, err = parseAgentArgs([]string{"-config", file, "-authoritative-region", "eu", "-acl-replication-token", "t2"}, &stderr)
	require.NoError(t, err, stderr.String())
	require.Equal(t, "eu", cfg.AuthoritativeRegion)
	require.Equal(t, "t2", cfg.ReplicationToken)

	cfg, _, err = parseAgentArgs(nil, &stderr)
	require.NoError(t, err, stderr.String())
	require.Equal(t, "global", cfg.Region, "Nomad's default region")
}
