package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/tlsutil"
	"github.com/troupe-dev/troupe/runtime/driver/exec"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agent.hcl")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

const serverConfig = `
region     = "eu"
datacenter = "dc9"
data_dir   = "/var/lib/troupe"
bind_addr  = "10.0.0.5"

server {
  enabled          = true
  bootstrap_expect = 3
  encrypt          = "k1"
}

tls {
  http                   = true
  rpc                    = true
  ca_file                = "ca.pem"
  cert_file              = "server.pem"
  key_file               = "server-key.pem"
  verify_server_hostname = true
  verify_https_client    = true
}
`

// TestAgentConfigFile: `-config FILE` sets the agent as Nomad's agent
// configuration does; a later file and the flags override it.
func TestAgentConfigFile(t *testing.T) {
	var stderr bytes.Buffer
	cfg, _, err := parseAgentArgs([]string{"-config", writeConfig(t, serverConfig)}, &stderr)
	require.NoError(t, err, stderr.String())
	require.Equal(t, "eu", cfg.Region)
	require.Equal(t, "dc9", cfg.Datacenter)
	require.Equal(t, "/var/lib/troupe", cfg.DataDir)
	require.Equal(t, "10.0.0.5", cfg.BindAddr)
	require.Equal(t, "10.0.0.5:4646", cfg.HTTPAddr, "bind_addr moves the API as -bind does")
	require.True(t, cfg.Server)
	require.False(t, cfg.Client, "a file with a server block and no client block runs no client")
	require.Equal(t, 3, cfg.BootstrapExpect)
	require.Equal(t, "k1", cfg.GossipKey)
	require.Equal(t, tlsutil.Config{HTTP: true, RPC: true, CAFile: "ca.pem", CertFile: "server.pem", KeyFile: "server-key.pem",
		VerifyServerHostname: true, VerifyHTTPSClient: true}, cfg.TLS)

	client := writeConfig(t, "client {\n  enabled = true\n  servers = [\"10.0.0.5:4647\"]\n}\n")
	cfg, _, err = parseAgentArgs([]string{"-config", writeConfig(t, serverConfig), "--config=" + client,
		"-region", "us", "-bootstrap-expect", "1", "-tls-cert-file", "other.pem", "-servers", "10.0.0.6:4647"}, &stderr)
	require.NoError(t, err, stderr.String())
	require.Equal(t, "us", cfg.Region, "the flag overrides the file")
	require.Equal(t, 1, cfg.BootstrapExpect)
	require.Equal(t, "other.pem", cfg.TLS.CertFile)
	require.Equal(t, "ca.pem", cfg.TLS.CAFile, "what no flag sets stays as the file says")
	require.Equal(t, []string{"10.0.0.6:4647"}, cfg.Servers)
	require.True(t, cfg.Client, "the later file has a client block")
	require.False(t, cfg.Server, "the later file has no server block")
}

// TestAgentConfigFileACLAndTelemetry: the acl and telemetry blocks set
// what -acl-enabled and the -telemetry-* flags do.
func TestAgentConfigFileACLAndTelemetry(t *testing.T) {
	var stderr bytes.Buffer
	body := "acl {\n  enabled = true\n  token_ttl = \"5s\"\n}\ntelemetry {\n  prometheus_metrics = true\n  collection_interval = \"3s\"\n  disable_hostname = true\n}\n"
	cfg, _, err := parseAgentArgs([]string{"-config", writeConfig(t, body)}, &stderr)
	require.NoError(t, err, stderr.String())
	require.True(t, cfg.ACLEnabled)
	require.Equal(t, 5*time.Second, cfg.ACLTokenTTL)
	require.True(t, cfg.Telemetry.Prometheus)
	require.True(t, cfg.Telemetry.DisableHostname)
	require.Equal(t, 3*time.Second, cfg.Telemetry.Interval)

	_, _, err = parseAgentArgs([]string{"-config", writeConfig(t, "telemetry {\n  collection_interval = \"soon\"\n}\n")}, &stderr)
	require.ErrorContains(t, err, `collection_interval "soon"`)
	_, _, err = parseAgentArgs([]string{"-config", writeConfig(t, "acl {\n  token_ttl = \"0s\"\n}\n")}, &stderr)
	require.ErrorContains(t, err, `token_ttl "0s"`)
}

// TestAgentConfigFileRefusesUnknown: an attribute or block the file format
// does not know stops the agent, naming it.
func TestAgentConfigFileRefusesUnknown(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"bogus = 1\n", `An argument named "bogus" is not expected here`},
		{"server {\n  enabled = true\n  raft_protocol = 3\n}\n", `An argument named "raft_protocol" is not expected here`},
		{"consul {\n}\n", `Blocks of type "consul" are not expected here`},
		{"tls {\n  http = \"yes please\"\n}\n", "a bool is required"},
		{"region = \n", "agent.hcl:1"},
	} {
		var stderr bytes.Buffer
		_, _, err := parseAgentArgs([]string{"-config", writeConfig(t, tc.body)}, &stderr)
		require.Error(t, err, tc.body)
		require.Contains(t, stderr.String(), tc.want, tc.body)
	}
	var stderr bytes.Buffer
	_, _, err := parseAgentArgs([]string{"-config", filepath.Join(t.TempDir(), "missing.hcl")}, &stderr)
	require.Error(t, err)
	require.Contains(t, stderr.String(), "missing.hcl")
}

// TestAgentConfigFileClientIsolation: the client's chroot_env and user
// denylist and plugin "raw_exec" come from the file; the flags still
// override them; another plugin is refused by name.
func TestAgentConfigFileClientIsolation(t *testing.T) {
	var stderr bytes.Buffer
	body := `client {
  enabled = true
  chroot_env = {
    "/usr"       = "/usr"
    "/etc/ssl"   = "/etc/ssl"
    "/opt/tools" = "/tools"
  }
  user {
    denylist = ["root", "admin"]
  }
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
`
	file := writeConfig(t, body)
	cfg, _, err := parseAgentArgs([]string{"-config", file}, &stderr)
	require.NoError(t, err, stderr.String())
	require.Equal(t, map[string]string{"/usr": "/usr", "/etc/ssl": "/etc/ssl", "/opt/tools": "/tools"}, cfg.ChrootEnv)
	require.Equal(t, []string{"root", "admin"}, cfg.UserDenylist)
	require.True(t, cfg.RawExecEnabled)

	cfg, _, err = parseAgentArgs([]string{"-config", file, "-user-denylist", "", "-raw-exec=false"}, &stderr)
	require.NoError(t, err, stderr.String())
	require.Empty(t, cfg.UserDenylist, "the flag overrides the file")
	require.NotNil(t, cfg.UserDenylist, "an empty denylist is none, not the default")
	require.False(t, cfg.RawExecEnabled)

	cfg, _, err = parseAgentArgs(nil, &stderr)
	require.NoError(t, err)
	require.Nil(t, cfg.ChrootEnv, "no file: the exec driver's default chroot")
	require.Equal(t, exec.DefaultUserDenylist, cfg.UserDenylist)
	require.False(t, cfg.RawExecEnabled)

	_, _, err = parseAgentArgs([]string{"-config", writeConfig(t, "plugin \"docker\" {\n  config {\n    enabled = true\n  }\n}\n")}, &stderr)
	require.ErrorContains(t, err, `plugin "docker"`)
	_, _, err = parseAgentArgs([]string{"-config", writeConfig(t, "plugin \"raw_exec\" {\n  config {\n    no_cgroups = true\n  }\n}\n")}, &stderr)
	require.ErrorContains(t, err, "no_cgroups")
}
