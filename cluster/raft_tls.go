package cluster

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// RaftTLS puts mutual TLS on the raft transport: the listener takes
// Listen (which asks every peer for a certificate), dials to other
// servers use Dial. Both are required.
type RaftTLS struct {
	Listen, Dial *tls.Config
}

// tlsStreamLayer is raft's StreamLayer over TLS: a tls.Listener, and
// Dial with tls.DialWithDialer. A peer that does not complete the
// handshake with a certificate the listener accepts gets its connection
// closed by raft's handler on the first read.
type tlsStreamLayer struct {
	net.Listener
	advertise net.Addr
	dial      *tls.Config
}

var _ raft.StreamLayer = (*tlsStreamLayer)(nil)

// newTLSStreamLayer listens on bind; adv (nil: the bound address) is what
// the other servers dial.
func newTLSStreamLayer(bind string, adv net.Addr, t *RaftTLS) (*tlsStreamLayer, error) {
	if t.Listen == nil || t.Dial == nil {
		return nil, fmt.Errorf("%w: raft TLS needs both a listen and a dial config", ErrConfig)
	}
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, fmt.Errorf("cluster: raft transport on %s: %w", bind, err)
	}
	if adv == nil {
		adv = ln.Addr()
	}
	if a, ok := adv.(*net.TCPAddr); !ok || a.IP == nil || a.IP.IsUnspecified() {
		ln.Close()
		return nil, fmt.Errorf("%w: raft address %s is not advertisable", ErrConfig, adv)
	}
	return &tlsStreamLayer{Listener: tls.NewListener(ln, t.Listen), advertise: adv, dial: t.Dial}, nil
}

// Addr is the advertised address.
func (s *tlsStreamLayer) Addr() net.Addr { return s.advertise }

// Dial opens a TLS connection to another server, the handshake included.
func (s *tlsStreamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", string(address), s.dial)
}
