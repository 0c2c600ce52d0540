package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"strconv"
)

// tlsOpts are the CLI's TLS flags, as Nomad's CLI names them; each falls
// back to $TROUPE_<NAME>, then Nomad's $NOMAD_<NAME>.
type tlsOpts struct {
	caCert, clientCert, clientKey, serverName string
	skipVerify                                bool
}

func (m *meta) addTLSFlags() {
	m.fs.StringVar(&m.tls.caCert, "ca-cert", "", "CA certificate to verify the agent's HTTPS certificate (default $TROUPE_CACERT, else $NOMAD_CACERT)")
	m.fs.StringVar(&m.tls.clientCert, "client-cert", "", "client certificate for an agent that asks for one (default $TROUPE_CLIENT_CERT, else $NOMAD_CLIENT_CERT)")
	m.fs.StringVar(&m.tls.clientKey, "client-key", "", "the client certificate's key (default $TROUPE_CLIENT_KEY, else $NOMAD_CLIENT_KEY)")
	m.fs.StringVar(&m.tls.serverName, "tls-server-name", "", "name the agent's certificate must have (default $TROUPE_TLS_SERVER_NAME, else $NOMAD_TLS_SERVER_NAME)")
	m.fs.BoolVar(&m.tls.skipVerify, "tls-skip-verify", false, "do not verify the agent's certificate (default $TROUPE_SKIP_VERIFY, else $NOMAD_SKIP_VERIFY)")
}

func envOr(v, name string) string {
	for _, s := range []string{v, getenv("TROUPE_" + name), getenv("NOMAD_" + name)} {
		if s != "" {
			return s
		}
	}
	return ""
}

// tlsConfig is the client's TLS config: nil when no flag or variable
// asks for anything (a plain https:// address then uses the system's CAs).
func (m *meta) tlsConfig() (*tls.Config, error) {
	ca, cert, key := envOr(m.tls.caCert, "CACERT"), envOr(m.tls.clientCert, "CLIENT_CERT"), envOr(m.tls.clientKey, "CLIENT_KEY")
	name := envOr(m.tls.serverName, "TLS_SERVER_NAME")
	skip := m.tls.skipVerify
	if s := envOr("", "SKIP_VERIFY"); !skip && s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("SKIP_VERIFY=%q is not a boolean", s)
		}
		skip = b
	}
	if ca == "" && cert == "" && key == "" && name == "" && !skip {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: name, InsecureSkipVerify: skip}
	if ca != "" {
		b, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("-ca-cert: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("-ca-cert %s holds no PEM certificate", ca)
		}
	}
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("-client-cert and -client-key go together")
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("-client-cert: %w", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// httpClient is the client the API calls use: Go's default one, or one
// with the TLS config.
func (m *meta) httpClient() (*http.Client, *tls.Config, error) {
	c, err := m.tlsConfig()
	if err != nil || c == nil {
		return nil, nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = c
	return &http.Client{Transport: tr}, c, nil
}
