package agent

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/tlsutil"
)

// writePEM writes a certificate and key as name.pem and name-key.pem.
func writePEM(t *testing.T, dir, name string, p *tlsutil.PEM) (string, string) {
	t.Helper()
	cert, key := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	require.NoError(t, os.WriteFile(cert, p.Cert, 0o644))
	require.NoError(t, os.WriteFile(key, p.Key, 0o600))
	return cert, key
}

// TestHTTPSWithClientCertificates: an agent with tls { http = true,
// verify_https_client = true } serves its API over HTTPS to Nomad's Go
// client configured with the CA and a CLI certificate; plain HTTP and a
// caller without a certificate get nothing; a SIGHUP reload (ReloadTLS)
// serves the new certificate to new connections.
func TestHTTPSWithClientCertificates(t *testing.T) {
	dir := t.TempDir()
	ca, err := tlsutil.NewCA(tlsutil.CAOptions{})
	require.NoError(t, err)
	caFile, _ := writePEM(t, dir, "ca", ca)
	server, err := tlsutil.NewCert(ca, tlsutil.CertOptions{Role: tlsutil.RoleServer})
	require.NoError(t, err)
	certFile, keyFile := writePEM(t, dir, "server", server)
	cli, err := tlsutil.NewCert(ca, tlsutil.CertOptions{Role: tlsutil.RoleCLI})
	require.NoError(t, err)
	cliCert, cliKey := writePEM(t, dir, "cli", cli)

	cfg := testConfig(t, t.TempDir())
	cfg.TLS = tlsutil.Config{HTTP: true, CAFile: caFile, CertFile: certFile, KeyFile: keyFile, VerifyHTTPSClient: true}
	a := startAgent(t, cfg)
	defer a.Shutdown()

	c, err := nomad.NewClient(&nomad.Config{Address: "https://" + a.HTTPAddr(), TLSConfig: &nomad.TLSConfig{
		CACert: caFile, ClientCert: cliCert, ClientKey: cliKey, TLSServerName: "server.global.nomad"}})
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(parkedJob("tls"), nil)
	require.NoError(t, err)
	job, _, err := c.Jobs().Info("tls", nil)
	require.NoError(t, err)
	require.Equal(t, "tls", *job.ID)

	resp, err := http.Get("http://" + a.HTTPAddr() + "/v1/jobs")
	if err == nil {
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "plain HTTP to the HTTPS API is refused")
	}
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca.Cert))
	noCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "server.global.nomad"}}}
	_, err = noCert.Get("https://" + a.HTTPAddr() + "/v1/jobs")
	require.Error(t, err, "a caller without a client certificate is refused")

	serial := func() string {
		pair, err := tls.LoadX509KeyPair(cliCert, cliKey)
		require.NoError(t, err)
		conn, err := tls.Dial("tcp", a.HTTPAddr(), &tls.Config{RootCAs: pool, ServerName: "server.global.nomad", Certificates: []tls.Certificate{pair}})
		require.NoError(t, err)
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	before := serial()
	renewed, err := tlsutil.NewCert(ca, tlsutil.CertOptions{Role: tlsutil.RoleServer})
	require.NoError(t, err)
	writePEM(t, dir, "server", renewed)
	require.NoError(t, a.ReloadTLS())
	require.NotEqual(t, before, serial(), "a new connection gets the reloaded certificate")
	_, _, err = c.Jobs().Info("tls", nil)
	require.NoError(t, err, "the API goes on after the reload")

	require.NoError(t, os.WriteFile(certFile, []byte("garbage"), 0o644))
	require.Error(t, a.ReloadTLS(), "a bad file is refused")
	_, _, err = c.Jobs().Info("tls", nil)
	require.NoError(t, err, "and the old certificate stays")
}

// TestTLSConfigNeedsFiles: TLS without its files does not start.
func TestTLSConfigNeedsFiles(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.TLS = tlsutil.Config{HTTP: true, CAFile: "/nonexistent/ca.pem"}
	_, err := New(cfg)
	require.ErrorContains(t, err, "cert_file key_file")
	cfg.TLS.CertFile, cfg.TLS.KeyFile = "/nonexistent/c.pem", "/nonexistent/k.pem"
	_, err = New(cfg)
	require.ErrorContains(t, err, "/nonexistent/c.pem")
}
