// Package tlsutil makes the certificates a troupe cluster's TLS uses, as
// Nomad's `tls ca create` and `tls cert create` make them: an ECDSA P-256
// certificate authority, and server, client and CLI certificates it signs
// that name their role and region ("server.global.nomad"), so that a
// client's certificate cannot pass for a server's when servers verify
// hostnames. Only Go's crypto/x509 is used: nothing shells out to openssl.
package tlsutil
