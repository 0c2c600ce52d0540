package agent

import (
	"crypto/tls"
	"net"
	"net/http"
	"time"

	"github.com/troupe-dev/troupe/cluster"
	"github.com/troupe-dev/troupe/cluster/tlsutil"
)

// setupTLS reads the tls block's files (Config.TLS); nothing when TLS is
// off.
func (a *Agent) setupTLS() error {
	if !a.cfg.TLS.Enabled() {
		return nil
	}
	l, err := tlsutil.NewLoader(a.cfg.TLS)
	if err != nil {
		return err
	}
	a.tls = l
	return nil
}

// ReloadTLS reads the certificate, key and CA files again (SIGHUP): new
// connections use them, open ones go on. Without TLS it does nothing.
func (a *Agent) ReloadTLS() error {
	if a.tls == nil {
		return nil
	}
	if err := a.tls.Reload(); err != nil {
		return err
	}
	a.log.Info("tls certificates reloaded")
	return nil
}

// httpsOn reports whether the API is served over HTTPS.
func (a *Agent) httpsOn() bool { return a.tls != nil && a.cfg.TLS.HTTP }

// tlsListener wraps the API's listener when it serves HTTPS.
func (a *Agent) tlsListener(ln net.Listener) net.Listener {
	if !a.httpsOn() {
		return ln
	}
	return tls.NewListener(ln, a.tls.ServerConfig(a.cfg.TLS.VerifyHTTPSClient))
}

// proxyTransport is how this agent passes a request on to another agent's
// API, a server's or a client's: over HTTPS with its own certificate when
// the API is HTTPS (every agent of a cluster serves the same), where
// with verify_server_hostname the other's certificate must name a server
// or a client of the region; else nil (plain HTTP).
func (a *Agent) proxyTransport() http.RoundTripper {
	if !a.httpsOn() {
		return nil
	}
	names := a.tls.PeerNames(a.cfg.Region, tlsutil.RoleServer, tlsutil.RoleClient)
	return &http.Transport{
		Proxy:               nil,
		TLSClientConfig:     a.tls.PeerDialConfig(names),
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
	}
}

// rpcTLSOn reports whether the links between agents use mutual TLS.
func (a *Agent) rpcTLSOn() bool { return a.tls != nil && a.cfg.TLS.RPC }

// rpcPeerRoles are the roles of the agents that may reach this one over
// the RPC transport, and that it may reach: servers talk to servers and
// clients, clients to servers only. With verify_server_hostname the
// peer's certificate must name one of these roles in this region.
func (a *Agent) rpcPeerRoles() []string {
	if a.cfg.Server {
		return []string{tlsutil.RoleServer, tlsutil.RoleClient}
	}
	return []string{tlsutil.RoleServer}
}

// rpcTLS is the RPC transport's TLS (nil, nil when it is plain).
func (a *Agent) rpcTLS() (listen, dial *tls.Config) {
	if !a.rpcTLSOn() {
		return nil, nil
	}
	names := a.tls.PeerNames(a.cfg.Region, a.rpcPeerRoles()...)
	if a.cfg.Server && len(names) > 0 { // federation: other regions' servers forward to this one
		names = append(names, a.tls.PeerNames(tlsutil.AnyRegion, tlsutil.RoleServer)...)
	}
	return a.tls.PeerListenConfig(names), a.tls.PeerDialConfig(names)
}

// raftTLS is the raft transport's TLS (nil when plain): only servers of
// this region are raft peers.
func (a *Agent) raftTLS() *cluster.RaftTLS {
	if !a.rpcTLSOn() {
		return nil
	}
	names := a.tls.PeerNames(a.cfg.Region, tlsutil.RoleServer)
	return &cluster.RaftTLS{Listen: a.tls.PeerListenConfig(names), Dial: a.tls.PeerDialConfig(names)}
}
