package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func parse(t *testing.T, p *PEM) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(p.Cert)
	require.NotNil(t, b)
	c, err := x509.ParseCertificate(b.Bytes)
	require.NoError(t, err)
	return c
}

// TestCertsNameTheirRole: the CA signs server, client and CLI
// certificates that verify for their own role's name only, with the
// usages each needs.
func TestCertsNameTheirRole(t *testing.T) {
	ca, err := NewCA(CAOptions{})
	require.NoError(t, err)
	caCert := parse(t, ca)
	require.True(t, caCert.IsCA)
	require.WithinDuration(t, time.Now().AddDate(0, 0, 1825), caCert.NotAfter, time.Hour)
	pool := x509.NewCertPool()
	pool.AddCert(caCert)

	server, err := NewCert(ca, CertOptions{Role: RoleServer, Region: "eu", AdditionalIPs: []net.IP{net.ParseIP("10.0.0.7")}})
	require.NoError(t, err)
	client, err := NewCert(ca, CertOptions{Role: RoleClient, Region: "eu"})
	require.NoError(t, err)
	cli, err := NewCert(ca, CertOptions{Role: RoleCLI, Region: "eu"})
	require.NoError(t, err)

	sc := parse(t, server)
	require.Contains(t, sc.DNSNames, "server.eu.nomad")
	require.Contains(t, sc.DNSNames, "localhost")
	require.WithinDuration(t, time.Now().AddDate(0, 0, 365), sc.NotAfter, time.Hour)
	verify := func(c *x509.Certificate, name string, usage x509.ExtKeyUsage) error {
		_, err := c.Verify(x509.VerifyOptions{Roots: pool, DNSName: name, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
	require.NoError(t, verify(sc, "server.eu.nomad", x509.ExtKeyUsageServerAuth))
	require.NoError(t, verify(sc, "10.0.0.7", x509.ExtKeyUsageServerAuth))
	require.Error(t, verify(sc, "server.us.nomad", x509.ExtKeyUsageServerAuth), "a server of another region")
	cc := parse(t, client)
	require.Error(t, verify(cc, "server.eu.nomad", x509.ExtKeyUsageServerAuth), "a client cannot pass for a server")
	require.NoError(t, verify(cc, "client.eu.nomad", x509.ExtKeyUsageClientAuth))
	clic := parse(t, cli)
	require.Error(t, verify(clic, "cli.eu.nomad", x509.ExtKeyUsageServerAuth), "a CLI certificate cannot serve")
	require.NoError(t, verify(clic, "cli.eu.nomad", x509.ExtKeyUsageClientAuth))

	other, err := NewCA(CAOptions{})
	require.NoError(t, err)
	_, _, err = ParseCA(&PEM{Cert: ca.Cert, Key: other.Key})
	require.ErrorContains(t, err, "does not match")
	_, err = NewCert(server, CertOptions{Role: RoleServer})
	require.ErrorContains(t, err, "not a CA")
	_, err = NewCert(ca, CertOptions{Role: "admin"})
	require.ErrorContains(t, err, "must be server, client or cli")
}

// TestMutualTLSHandshake: a server with its certificate that demands a
// client certificate accepts the client's and refuses a stranger's.
func TestMutualTLSHandshake(t *testing.T) {
	ca, err := NewCA(CAOptions{})
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca.Cert))
	pair := func(p *PEM) tls.Certificate {
		c, err := tls.X509KeyPair(p.Cert, p.Key)
		require.NoError(t, err)
		return c
	}
	server, err := NewCert(ca, CertOptions{Role: RoleServer})
	require.NoError(t, err)
	client, err := NewCert(ca, CertOptions{Role: RoleClient})
	require.NoError(t, err)
	stranger, err := NewCA(CAOptions{})
	require.NoError(t, err)
	strangerCert, err := NewCert(stranger, CertOptions{Role: RoleClient})
	require.NoError(t, err)

	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair(server)},
		ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12})
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _ = c.(*tls.Conn).Handshake(); _, _ = c.Write([]byte("ok")) }()
		}
	}()
	dial := func(cert tls.Certificate) error {
		c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "server.global.nomad",
			Certificates: []tls.Certificate{cert}})
		if err != nil {
			return err
		}
		defer c.Close()
		buf := make([]byte, 2)
		_, err = c.Read(buf)
		return err
	}
	require.NoError(t, dial(pair(client)))
	require.Error(t, dial(pair(strangerCert)), "a certificate of another CA is refused")
}
