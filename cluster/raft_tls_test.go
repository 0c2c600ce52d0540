package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/tlsutil"
)

// raftTLS makes the raft TLS of an agent holding a certificate of role
// in region, verifying server hostnames of the global region.
func raftTLS(t *testing.T, ca *tlsutil.PEM, role, region string) *RaftTLS {
	t.Helper()
	b, err := tlsutil.WriteBundle(t.TempDir(), role, ca, tlsutil.CertOptions{Role: role, Region: region})
	require.NoError(t, err)
	l, err := tlsutil.NewLoader(b.Config(true))
	require.NoError(t, err)
	names := l.PeerNames("global", tlsutil.RoleServer)
	return &RaftTLS{Listen: l.PeerListenConfig(names), Dial: l.PeerDialConfig(names)}
}

func startTLS(t *testing.T, id string, bootstrap bool, rt *RaftTLS) *server {
	return startServer(t, RaftConfig{
		NodeID: id, DataDir: t.TempDir(), BindAddr: freePort(t), Bootstrap: bootstrap, TLS: rt,
		HeartbeatTimeout: 500 * time.Millisecond, ElectionTimeout: 500 * time.Millisecond, LeaderLeaseTimeout: 250 * time.Millisecond,
	})
}

// refused checks that a conversation with the raft listener fails: the
// connection is closed (or the handshake fails) before any reply. It
// returns the read's error.
func refused(t *testing.T, conn net.Conn) error {
	t.Helper()
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	_, _ = conn.Write([]byte{0, 'x', 'y', 'z', '\n'}) // raft's AppendEntries RPC type, then junk
	_, err := conn.Read(make([]byte, 64))
	require.Error(t, err, "the raft listener answered a stranger")
	var ne net.Error
	if errors.As(err, &ne) {
		require.False(t, ne.Timeout(), "the connection was left open instead of closed")
	}
	return err
}

// TestRaftOverMutualTLS: three servers with server certificates of the
// region replicate over TLS; the listener refuses a plain TCP stranger,
// a TLS caller without a certificate, a client certificate and a server
// certificate of another region.
func TestRaftOverMutualTLS(t *testing.T) {
	ca, err := tlsutil.NewCA(tlsutil.CAOptions{})
	require.NoError(t, err)
	s1 := startTLS(t, "s1", true, raftTLS(t, ca, tlsutil.RoleServer, "global"))
	waitLeader(t, s1)
	s2 := startTLS(t, "s2", false, raftTLS(t, ca, tlsutil.RoleServer, "global"))
	s3 := startTLS(t, "s3", false, raftTLS(t, ca, tlsutil.RoleServer, "global"))
	require.NoError(t, s1.AddVoter("s2", s2.LocalAddr()))
	require.NoError(t, s1.AddVoter("s3", s3.LocalAddr()))
	_, _, err = s1.Apply(context.Background(), registerCmd("web"))
	require.NoError(t, err)
	for _, s := range []*server{s2, s3} {
		require.Eventually(t, func() bool { return s.store.Snapshot().JobByID("default", "web") != nil },
			waitFor, 10*time.Millisecond, "replicated to %s over TLS", s.cfg.NodeID)
	}

	addr := s1.LocalAddr()
	t.Run("plain tcp", func(t *testing.T) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		require.NoError(t, err)
		refused(t, c)
	})
	t.Run("tls without a certificate", func(t *testing.T) {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // a stranger
		if err == nil {
			refused(t, c)
		}
	})
	for _, tc := range []struct{ name, role, region string }{
		{"client certificate as a server", tlsutil.RoleClient, "global"},
		{"server of another region", tlsutil.RoleServer, "eu"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := raftTLS(t, ca, tc.role, tc.region)
			c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, //nolint:gosec // the stranger trusts anyone
				GetClientCertificate: rt.Dial.GetClientCertificate})
			if err == nil {
				err = refused(t, c)
			}
			require.ErrorContains(t, err, "tls: bad certificate", "refused for its certificate")
		})
	}
	t.Run("control: a server certificate of the region passes the handshake", func(t *testing.T) {
		rt := raftTLS(t, ca, tlsutil.RoleServer, "global")
		c, err := tls.Dial("tcp", addr, rt.Dial)
		require.NoError(t, err)
		require.NotContains(t, refused(t, c).Error(), "tls:", "only raft's own decoding closes it")
	})
	_, _, err = s1.Apply(context.Background(), registerCmd("after"))
	require.NoError(t, err, "the cluster works on after the strangers")
}
