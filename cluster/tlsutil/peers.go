package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"path"
)

// RoleName is the DNS name a certificate of role in region carries
// ("server.global.nomad"), the name verify_server_hostname checks.
func RoleName(role, region string) string { return role + "." + region + ".nomad" }

// AnyRegion, as PeerNames' region, accepts the role in every region
// ("server.*.nomad"): the servers of other regions reach this one's RPC
// when regions federate.
const AnyRegion = "*"

// PeerNames are the names a peer's certificate must carry one of, given
// the roles it may have: none (any certificate the CA signed) unless
// verify_server_hostname is set.
func (l *Loader) PeerNames(region string, roles ...string) []string {
	if !l.cfg.VerifyServerHostname {
		return nil
	}
	names := make([]string, 0, len(roles))
	for _, r := range roles {
		names = append(names, RoleName(r, region))
	}
	return names
}

// PeerListenConfig is the TLS config of a link between agents (the RPC
// and raft listeners): the caller must present a certificate the current
// CA signed, naming one of names (none: any name). The certificate and the
// CA are read at each handshake, so a reload applies to new connections.
func (l *Loader) PeerListenConfig(names []string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			cert, _ := l.current()
			return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{*cert},
				ClientAuth: tls.RequireAnyClientCert, VerifyConnection: l.verifyPeer(names)}, nil
		},
	}
}

// PeerDialConfig is the TLS config of a connection to another agent: this
// agent's current certificate, and the peer's must be signed by the
// current CA and name one of names (none: any name).
func (l *Loader) PeerDialConfig(names []string) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert, _ := l.current()
			return cert, nil
		},
		// The chain and names are checked by verifyPeer against the CA of
		// the moment (so a reload applies), not by crypto/tls's defaults.
		InsecureSkipVerify: true,
		VerifyConnection:   l.verifyPeer(names),
	}
}

// verifyPeer checks the peer's chain against the current CA and, when
// names is not empty, that its certificate carries one of them.
func (l *Loader) verifyPeer(names []string) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return ErrNoPeerCert
		}
		_, pool := l.current()
		opts := x509.VerifyOptions{Roots: pool, Intermediates: x509.NewCertPool(),
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}
		for _, ic := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(ic)
		}
		leaf := cs.PeerCertificates[0]
		if _, err := leaf.Verify(opts); err != nil {
			return err
		}
		if len(names) == 0 {
			return nil
		}
		for _, n := range names {
			if leaf.VerifyHostname(n) == nil || namesPattern(leaf, n) {
				return nil
			}
		}
		return fmt.Errorf("%w: it names %v, want one of %v", ErrPeerName, leaf.DNSNames, names)
	}
}

// namesPattern says whether pattern, a name with a wildcard region
// (AnyRegion), matches one of the certificate's DNS names.
func namesPattern(leaf *x509.Certificate, pattern string) bool {
	for _, dns := range leaf.DNSNames {
		if ok, _ := path.Match(pattern, dns); ok && pattern != dns {
			return true
		}
	}
	return false
}
