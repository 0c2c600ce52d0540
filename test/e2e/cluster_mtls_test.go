package e2e

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/cluster/tlsutil"
)

// spinNomadJob is spinJob as Nomad's Go client builds it.
func spinNomadJob(id string, count int) *nomad.Job {
	job := nomad.NewServiceJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	task := nomad.NewTask("spin", "exec").SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", "while true; do sleep 1; done"}).
		Require(&nomad.Resources{CPU: new(50), MemoryMB: new(32)})
	job.AddTaskGroup(nomad.NewTaskGroup("spin", count).AddTask(task))
	return job
}

// TestClusterMutualTLS: 3 servers and 2 clients with mutual TLS on the
// API, the RPC and the raft links and encrypted gossip run a job that
// Nomad's Go client registers over HTTPS. Then every link refuses a
// stranger: a plain TCP connection and a TLS one without a certificate to
// HTTP, RPC and raft are closed without an answer; a client certificate
// is refused as a raft peer and as a server dialing a client's RPC; a
// server certificate of another region is refused as a raft peer but
// accepted on a server's RPC (federation forwards there); an unencrypted
// gossip join is ignored (the member list is unchanged). The cluster
// works on after all of it.
func TestClusterMutualTLS(t *testing.T) {
	key, err := agent.NewGossipKey()
	require.NoError(t, err)
	tc := startTLSAgents(t, 3, 2, []string{"-encrypt", key})
	_, _, err = tc.nomadTLSClient(t, tc.follower(t)).Jobs().Register(spinNomadJob("tls-spin", 2), nil)
	require.NoError(t, err)
	tc.waitRunning(t, "tls-spin", 2, settleTimeout, nil)

	server, client := tc.servers[0].Host, tc.clients[0].Host
	httpHello := []byte("GET /v1/jobs HTTP/1.1\r\nHost: x\r\n\r\n")
	rawHello := []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00raft")
	for _, link := range []struct {
		name  string
		port  int
		hello []byte
	}{{"http", httpPort, httpHello}, {"rpc", rpcPort, rawHello}, {"raft", raftPort, rawHello}} {
		t.Run(link.name+" plain tcp", func(t *testing.T) {
			c, err := net.DialTimeout("tcp", server.AddrPort(link.port), 5*time.Second)
			require.NoError(t, err)
			strangerRefused(t, c, link.hello)
		})
		t.Run(link.name+" tls without a certificate", func(t *testing.T) {
			c, err := tlsDial(server.AddrPort(link.port), nil)
			if err == nil {
				err = strangerRefused(t, c, link.hello)
			}
			require.ErrorContains(t, err, "tls: certificate required")
		})
	}
	clientCert := tc.bundle(t, "impostor", tlsutil.RoleClient, "global")
	euServer := tc.bundle(t, "eu-server", tlsutil.RoleServer, "eu")
	for _, bad := range []struct {
		name string
		addr string
		cert tlsutil.Bundle
	}{
		{"client certificate as a raft peer", server.AddrPort(raftPort), clientCert},
		{"client certificate as a server dialing a client", client.AddrPort(rpcPort), clientCert},
		{"server of another region as a raft peer", server.AddrPort(raftPort), euServer},
	} {
		t.Run(bad.name, func(t *testing.T) {
			c, err := tlsDial(bad.addr, &bad.cert)
			if err == nil {
				err = strangerRefused(t, c, rawHello)
			}
			require.ErrorContains(t, err, "tls: bad certificate")
		})
	}

	t.Run("server of another region on rpc", func(t *testing.T) {
		pair, err := tls.LoadX509KeyPair(euServer.CertFile, euServer.KeyFile)
		require.NoError(t, err)
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", server.AddrPort(rpcPort),
			&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2"}, //nolint:gosec // the test trusts anyone
				Certificates: []tls.Certificate{pair}})
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
		_, err = c.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")) // gRPC answers with its SETTINGS
		require.NoError(t, err)
		n, err := c.Read(make([]byte, 64))
		require.NoError(t, err, "federation: another region's server reaches this one's RPC")
		require.Positive(t, n)
	})

	t.Run("gossip ignores unencrypted packets", func(t *testing.T) {
		before, err := memberStates(tc.servers[0])
		require.NoError(t, err)
		u, err := net.Dial("udp", server.AddrPort(gossipPort))
		require.NoError(t, err)
		_, err = u.Write([]byte("\x00plain ping from nobody"))
		require.NoError(t, err)
		require.NoError(t, u.Close())
		mc := memberlist.DefaultLANConfig()
		mc.Name, mc.BindAddr, mc.BindPort, mc.AdvertisePort = "stranger", "127.0.0.1", 0, 0
		mc.Logger, mc.LogOutput = nil, io.Discard
		ml, err := memberlist.Create(mc)
		require.NoError(t, err)
		defer func() { _ = ml.Shutdown() }()
		_, err = ml.Join([]string{server.AddrPort(gossipPort)})
		require.Error(t, err, "an unencrypted join is refused")
		require.Never(t, func() bool {
			now, err := memberStates(tc.servers[0])
			return err == nil && now != before
		}, 3*time.Second, pollEvery, "the member list changed: was %s", before)
	})

	t.Run("sighup reloads the certificate without dropping the cluster", func(t *testing.T) {
		probe := tc.bundle(t, "probe", tlsutil.RoleServer, "global")
		serials := func() map[int]string {
			out := map[int]string{}
			for _, port := range []int{httpPort, rpcPort, raftPort} {
				c, err := tlsDial(server.AddrPort(port), &probe)
				if err != nil {
					continue
				}
				out[port] = c.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber.String()
				c.Close()
			}
			return out
		}
		before := serials()
		require.Len(t, before, 3)
		tc.bundle(t, "server0", tlsutil.RoleServer, "global") // a new certificate in the same files
		require.NoError(t, tc.servers[0].Proc.Signal(syscall.SIGHUP))
		tc.eventually(t, settleTimeout, "every link serves the new certificate", func() (bool, string) {
			now := serials()
			for port, serial := range before {
				if now[port] == "" || now[port] == serial {
					return false, fmt.Sprintf("before %v, now %v", before, now)
				}
			}
			return true, ""
		})
		tc.eventually(t, formTimeout, "the cluster is whole after the reload", func() (bool, string) { return tc.formed(2) })
	})

	_, _, err = tc.nomadTLSClient(t, tc.servers[0]).Jobs().Register(spinNomadJob("after", 1), nil)
	require.NoError(t, err)
	tc.waitRunning(t, "after", 1, settleTimeout, nil)
}
