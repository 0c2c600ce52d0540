package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
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

// TestCLIOverMutualTLS: the CLI reaches an HTTPS agent that asks for a
// client certificate with Nomad's variables (NOMAD_CACERT,
// NOMAD_CLIENT_CERT, NOMAD_CLIENT_KEY) or the flags, and fails without.
func TestCLIOverMutualTLS(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, args := range [][]string{{"tls", "ca", "create"}, {"tls", "cert", "create", "-server"}, {"tls", "cert", "create", "-cli"}} {
		code, _, errOut := runTLS(args...)
		require.Zero(t, code, errOut)
	}
	pair, err := tls.LoadX509KeyPair("global-server-nomad.pem", "global-server-nomad-key.pem")
	require.NoError(t, err)
	caPEM, err := os.ReadFile("nomad-agent-ca.pem")
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(caPEM))
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/jobs" {
			_, _ = w.Write([]byte("[]"))
			return
		}
		http.NotFound(w, r)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	defer srv.Close()
	addr := "https://" + srv.Listener.Addr().String()

	env := map[string]string{}
	old := getenv
	getenv = func(k string) string { return env[k] }
	defer func() { getenv = old }()

	code, _, errOut := runTLS("job", "status", "-address", addr)
	require.NotZero(t, code, "without the CA and a client certificate")
	require.NotEmpty(t, errOut)

	env["NOMAD_CACERT"] = "nomad-agent-ca.pem"
	env["NOMAD_CLIENT_CERT"] = "global-cli-nomad.pem"
	env["NOMAD_CLIENT_KEY"] = "global-cli-nomad-key.pem"
	env["NOMAD_TLS_SERVER_NAME"] = "server.global.nomad"
	code, out, errOut := runTLS("job", "status", "-address", addr)
	require.Zero(t, code, errOut)
	require.Contains(t, out, "No running jobs")

	env = map[string]string{}
	code, _, errOut = runTLS("job", "status", "-address", addr, "-ca-cert", "nomad-agent-ca.pem",
		"-client-cert", "global-cli-nomad.pem", "-client-key", "global-cli-nomad-key.pem", "-tls-server-name", "server.global.nomad")
	require.Zero(t, code, errOut)
	code, _, errOut = runTLS("job", "status", "-address", addr, "-client-cert", "global-cli-nomad.pem")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "-client-cert and -client-key go together")
}
