package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/clustertest"
	"github.com/troupe-dev/troupe/cluster/tlsutil"
)

// Ports of the links between agents.
const (
	rpcPort = 4647
)

// tlsCluster is a cluster whose every link uses mutual TLS, with the
// files it was made from.
type tlsCluster struct {
	*testCluster
	ca      *tlsutil.PEM
	certDir string
	cli     tlsutil.Bundle // the test's own certificate (a CLI one)
	// restart starts an agent again, on its host with its flags, data
	// directory and node name (its old process must be gone).
	restart func(t *testing.T, a *agentProc) *agentProc
}

// bundle signs a certificate of role in region and writes it under the
// cluster's certificate directory as name.
func (tc *tlsCluster) bundle(t *testing.T, name, role, region string) tlsutil.Bundle {
	t.Helper()
	dir := filepath.Join(tc.certDir, name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	b, err := tlsutil.WriteBundle(dir, role, tc.ca, tlsutil.CertOptions{Role: role, Region: region})
	require.NoError(t, err)
	return b
}

// tlsArgs are the agent flags of a tls block with both links on, client
// certificates required on the API and server hostnames verified.
func tlsArgs(b tlsutil.Bundle) []string {
	return []string{"-tls-http", "-tls-rpc", "-tls-ca-file", b.CAFile, "-tls-cert-file", b.CertFile,
		"-tls-key-file", b.KeyFile, "-tls-verify-https-client", "-tls-verify-server-hostname"}
}

// httpsClient is an HTTP client holding the test's CLI certificate that
// trusts the CA and expects the certificate of an agent of role.
func (tc *tlsCluster) httpsClient(t *testing.T, role string) *http.Client {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(tc.cli.CertFile, tc.cli.KeyFile)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(tc.ca.Cert))
	return &http.Client{Timeout: requestTimeout, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, Certificates: []tls.Certificate{cert}, ServerName: tlsutil.RoleName(role, "global"),
		MinVersion: tls.VersionTLS12}}}
}

// startTLSAgents starts servers and clients, each with its own
// certificate of its role and the extra flags, and waits for the cluster
// to form as startAgents does, over HTTPS.
func startTLSAgents(t *testing.T, servers, clients int, extra []string) *tlsCluster {
	t.Helper()
	dataRoot := t.TempDir()
	ca, err := tlsutil.NewCA(tlsutil.CAOptions{})
	require.NoError(t, err)
	tc := &tlsCluster{ca: ca, certDir: t.TempDir()}
	tc.cli = tc.bundle(t, "cli", tlsutil.RoleCLI, "global")
	c := clustertest.New(t, servers+clients, logDirOption(t)...)
	tc.testCluster = &testCluster{c: c}
	hosts := c.Hosts()
	serverAddrs := make([]string, 0, servers)
	for _, h := range hosts[:servers] {
		serverAddrs = append(serverAddrs, h.Addr)
	}
	tuning := append(slices.Clone(clusterTuning), extra...)
	type launch struct {
		role string
		args []string
	}
	launched := map[*clustertest.Host]launch{}
	run := func(h *clustertest.Host, proc, node, role string, args, tuning []string) *agentProc {
		a := startAgentTuned(t, h, proc, dataRoot, args, tuning)
		a.Name = node
		var err error
		a.API, err = api.NewClient(&api.Config{Address: "https://" + h.AddrPort(httpPort), HTTPClient: tc.httpsClient(t, role)})
		require.NoError(t, err)
		return a
	}
	start := func(h *clustertest.Host, name, role string, args []string) *agentProc {
		args = append(args, tlsArgs(tc.bundle(t, name, role, "global"))...)
		launched[h] = launch{role: role, args: args}
		return run(h, name, name, role, args, tuning)
	}
	restarts := 0
	tc.restart = func(t *testing.T, old *agentProc) *agentProc {
		restarts++
		l := launched[old.Host]
		again := append(slices.Clone(tuning), "-data-dir", filepath.Join(dataRoot, old.Name), "-node", old.Name)
		a := run(old.Host, fmt.Sprintf("%s-restart%d", old.Name, restarts), old.Name, l.role, l.args, again)
		for i, s := range tc.servers {
			if s == old {
				tc.servers[i] = a
			}
		}
		return a
	}
	for i := range servers {
		args := []string{"agent", "-server", "-bootstrap-expect", strconv.Itoa(servers)}
		for j, addr := range serverAddrs {
			if j != i {
				args = append(args, "-join", addr)
			}
		}
		tc.servers = append(tc.servers, start(hosts[i], fmt.Sprintf("server%d", i), tlsutil.RoleServer, args))
	}
	for i := range clients {
		args := []string{"agent", "-client", "-servers", strings.Join(serverAddrs, ",")}
		tc.clients = append(tc.clients, start(hosts[servers+i], fmt.Sprintf("client%d", i), tlsutil.RoleClient, args))
	}
	tc.eventually(t, formTimeout, "cluster formation over mutual TLS", func() (bool, string) { return tc.formed(clients) })
	return tc
}

// nomadTLSClient is Nomad's Go client with the test's CLI certificate.
func (tc *tlsCluster) nomadTLSClient(t *testing.T, a *agentProc) *nomad.Client {
	t.Helper()
	c, err := nomad.NewClient(&nomad.Config{Address: "https://" + a.Host.AddrPort(httpPort), TLSConfig: &nomad.TLSConfig{
		CACert: tc.cli.CAFile, ClientCert: tc.cli.CertFile, ClientKey: tc.cli.KeyFile, TLSServerName: "server.global.nomad"}})
	require.NoError(t, err)
	return c
}

// memberStates is "name=status" of every gossip member a sees, sorted.
func memberStates(a *agentProc) (string, error) {
	members, err := a.API.Agent().Members()
	if err != nil {
		return "", err
	}
	var out []string
	for _, m := range members.Members {
		out = append(out, m.Name+"="+m.Status)
	}
	sort.Strings(out)
	return strings.Join(out, " "), nil
}

// strangerRefused sends a few bytes on conn and checks the listener
// closes it (or fails its handshake) without answering; it returns the
// read's error.
func strangerRefused(t *testing.T, conn net.Conn, hello []byte) error {
	t.Helper()
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	_, _ = conn.Write(hello)
	var err error
	buf := make([]byte, 256)
	for err == nil { // a plain HTTP answer to HTTPS, or an alert: read to the end
		var n int
		n, err = conn.Read(buf)
		if n > 0 && strings.HasPrefix(string(buf[:n]), "HTTP/1.1 200") {
			t.Fatalf("the listener answered a stranger: %q", buf[:n])
		}
	}
	var ne net.Error
	if errors.As(err, &ne) {
		require.False(t, ne.Timeout(), "the connection was left open instead of closed")
	}
	return err
}

// tlsDial opens a TLS connection as a stranger that trusts anyone and
// presents cert (nil: none). The handshake error, if any, is returned.
func tlsDial(addr string, cert *tlsutil.Bundle) (net.Conn, error) {
	cfg := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // a stranger trusts anyone
	if cert != nil {
		c, err := tls.LoadX509KeyPair(cert.CertFile, cert.KeyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
}
