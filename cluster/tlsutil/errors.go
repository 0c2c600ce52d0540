package tlsutil

import "errors"

// Errors of a peer's certificate.
var (
	ErrNoPeerCert = errors.New("tlsutil: the peer sent no certificate")
	ErrPeerName   = errors.New("tlsutil: the peer's certificate does not name its role")
)
