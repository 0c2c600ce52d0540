package tlsutil

import (
	"crypto/x509"
	"encoding/pem"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAnyRegionName: "server.*.nomad" accepts a server of any region,
// not a client, and not a server of another domain.
func TestAnyRegionName(t *testing.T) {
	ca, err := NewCA(CAOptions{})
	require.NoError(t, err)
	leaf := func(role, region string) *x509.Certificate {
		p, err := NewCert(ca, CertOptions{Role: role, Region: region})
		require.NoError(t, err)
		b, _ := pem.Decode(p.Cert)
		c, err := x509.ParseCertificate(b.Bytes)
		require.NoError(t, err)
		return c
	}
	any := RoleName(RoleServer, AnyRegion)
	require.True(t, namesPattern(leaf(RoleServer, "west"), any))
	require.True(t, namesPattern(leaf(RoleServer, "global"), any))
	require.False(t, namesPattern(leaf(RoleClient, "west"), any))
	require.False(t, namesPattern(leaf(RoleServer, "west"), RoleName(RoleServer, "east")), "no wildcard, no match here")
}
