package main

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func runTLS(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestTLSCreate: `tls ca create` and `tls cert create` write Nomad's file
// names in the working directory, keys 0600, certificates the CA
// verifies for their role's name; nothing is ever overwritten.
func TestTLSCreate(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, errOut := runTLS("tls", "ca", "create")
	require.Zero(t, code, errOut)
	require.Equal(t, "==> CA certificate saved to: nomad-agent-ca.pem\n==> CA certificate key saved to: nomad-agent-ca-key.pem\n", out)
	code, out, errOut = runTLS("tls", "cert", "create", "-server", "-region", "eu", "-additional-dnsname", "a.example")
	require.Zero(t, code, errOut)
	require.Contains(t, out, "==> Server Certificate saved to eu-server-nomad.pem\n")
	code, _, errOut = runTLS("tls", "cert", "create", "-client")
	require.Zero(t, code, errOut)

	fi, err := os.Stat("eu-server-nomad-key.pem")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	caPEM, err := os.ReadFile("nomad-agent-ca.pem")
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(caPEM))
	for file, name := range map[string]string{"eu-server-nomad.pem": "server.eu.nomad", "global-client-nomad.pem": "client.global.nomad"} {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		blk, _ := pem.Decode(b)
		c, err := x509.ParseCertificate(blk.Bytes)
		require.NoError(t, err)
		_, err = c.Verify(x509.VerifyOptions{Roots: pool, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
		require.NoError(t, err, file)
	}

	code, _, errOut = runTLS("tls", "ca", "create")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "nomad-agent-ca.pem already exists")
	after, err := os.ReadFile("nomad-agent-ca.pem")
	require.NoError(t, err)
	require.Equal(t, caPEM, after, "the CA is not overwritten")
	code, _, errOut = runTLS("tls", "cert", "create", "-server", "-client")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "exactly one of -server, -client and -cli")
	code, _, errOut = runTLS("tls", "cert", "create", "-cli", "-ca", "missing.pem")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "reading the CA")
}
