package main

import (
	"flag"

	"github.com/troupe-dev/troupe/cluster/tlsutil"
)

// tlsFlagsOf adds the agent's tls flags (Nomad's tls block): HTTPS on the
// API, mutual TLS between agents, the CA, certificate and key files. The
// values already in c (from a config file) are the defaults.
func tlsFlagsOf(fs *flag.FlagSet, c *tlsutil.Config) {
	fs.BoolVar(&c.HTTP, "tls-http", c.HTTP, "serve the HTTP API over HTTPS (tls { http = true })")
	fs.BoolVar(&c.RPC, "tls-rpc", c.RPC, "mutual TLS on the RPC (gRPC actor) and raft links between agents (tls { rpc = true })")
	fs.StringVar(&c.CAFile, "tls-ca-file", c.CAFile, "CA certificate that signed the agents' and callers' certificates")
	fs.StringVar(&c.CertFile, "tls-cert-file", c.CertFile, "this agent's certificate (troupe tls cert create)")
	fs.StringVar(&c.KeyFile, "tls-key-file", c.KeyFile, "this agent's certificate key")
	fs.BoolVar(&c.VerifyHTTPSClient, "tls-verify-https-client", c.VerifyHTTPSClient, "the API asks every caller for a certificate the CA signed")
	fs.BoolVar(&c.VerifyServerHostname, "tls-verify-server-hostname", c.VerifyServerHostname,
		"a server's certificate must name server.<region>.nomad (a client's client.<region>.nomad): on the RPC and raft links and when this agent passes a request on to another")
}
