package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/clustertest"
	"github.com/troupe-dev/troupe/cluster/tlsutil"
)

// TestClusterFederationMutualTLS: one server in each of two regions, every
// link on mutual TLS with verified server names (each server holds a
// certificate of its own region): the WAN pool forms and a request for
// west through east is answered over the RPC's mutual TLS.
func TestClusterFederationMutualTLS(t *testing.T) {
	dataRoot := t.TempDir()
	ca, err := tlsutil.NewCA(tlsutil.CAOptions{})
	require.NoError(t, err)
	tc := &tlsCluster{ca: ca, certDir: t.TempDir()}
	tc.cli = tc.bundle(t, "cli", tlsutil.RoleCLI, "global")
	c := clustertest.New(t, 2, logDirOption(t)...)
	tc.testCluster = &testCluster{c: c}
	hosts := c.Hosts()
	start := func(h *clustertest.Host, region string, extra ...string) *agentProc {
		args := append([]string{"agent", "-server", "-bootstrap-expect", "1", "-region", region}, extra...)
		args = append(args, tlsArgs(tc.bundle(t, region+"-server", tlsutil.RoleServer, region))...)
		return startAgent(t, h, region+"-server0", dataRoot, args)
	}
	east := start(hosts[0], "east")
	west := start(hosts[1], "west", "-retry-join", hosts[0].Addr)
	tc.servers = []*agentProc{east, west}

	cert, err := tls.LoadX509KeyPair(tc.cli.CertFile, tc.cli.KeyFile)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca.Cert))
	hc := &http.Client{Timeout: requestTimeout, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, Certificates: []tls.Certificate{cert}, ServerName: tlsutil.RoleName(tlsutil.RoleServer, "east"),
		MinVersion: tls.VersionTLS12}}}
	get := func(path string) (int, string) {
		resp, err := hc.Get("https://" + hosts[0].AddrPort(httpPort) + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	tc.eventually(t, formTimeout, "west known to east over the WAN pool", func() (bool, string) {
		code, body := get("/v1/regions")
		var regions []string
		_ = json.Unmarshal([]byte(body), &regions)
		return code == http.StatusOK && len(regions) == 2, fmt.Sprint(code, body)
	})
	tc.eventually(t, formTimeout, "a read for west through east", func() (bool, string) {
		code, body := get("/v1/status/leader?region=west")
		return code == http.StatusOK && strings.TrimSpace(body) == fmt.Sprintf("%q", west.RaftAddr()), fmt.Sprint(code, body)
	})
}
