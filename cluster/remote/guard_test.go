package remote

import (
	"crypto/x509"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCertRole: the role is the first label of a "<role>.<region>.nomad"
// name; a server name wins; a certificate without one names no role.
func TestCertRole(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"server.global.nomad", "localhost"}, "server"},
		{[]string{"localhost", "client.eu.nomad"}, "client"},
		{[]string{"cli.global.nomad"}, "cli"},
		{[]string{"client.global.nomad", "server.global.nomad"}, "server"},
		{[]string{"localhost", "node1.example.com"}, ""},
		{nil, ""},
	} {
		require.Equal(t, tc.want, certRole(&x509.Certificate{DNSNames: tc.names}), "%v", tc.names)
	}
}
