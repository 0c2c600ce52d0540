package remote

import (
	"crypto/x509"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCertRole: the role and region are the first labels of a
// "<role>.<region>.nomad" name; a server name wins, then the first other;
// a certificate without one names no role.
func TestCertRole(t *testing.T) {
	for _, tc := range []struct {
		names        []string
		role, region string
	}{
		{[]string{"server.global.nomad", "localhost"}, "server", "global"},
		{[]string{"localhost", "client.eu.nomad"}, "client", "eu"},
		{[]string{"cli.global.nomad"}, "cli", "global"},
		{[]string{"client.global.nomad", "server.us.nomad"}, "server", "us"},
		{[]string{"client.eu.nomad", "cli.us.nomad"}, "client", "eu"},
		{[]string{"localhost", "node1.example.com"}, "", ""},
		{nil, "", ""},
	} {
		role, region := certRole(&x509.Certificate{DNSNames: tc.names})
		require.Equal(t, tc.role, role, "%v", tc.names)
		require.Equal(t, tc.region, region, "%v", tc.names)
	}
}
