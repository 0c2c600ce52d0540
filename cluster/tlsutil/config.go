package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
)

// Config is the agent's tls block, as Nomad's: which links use TLS, the
// files, and how strictly peers are checked.
type Config struct {
	// HTTP serves the API over HTTPS; RPC puts TLS on the links between
	// agents.
	HTTP, RPC bool
	CAFile    string
	CertFile  string
	KeyFile   string
	// VerifyServerHostname: a server's certificate must name
	// "server.<region>.nomad" (so a client's cannot act as a server).
	VerifyServerHostname bool
	// VerifyHTTPSClient: the API asks every caller for a certificate the
	// CA signed.
	VerifyHTTPSClient bool
}

// Enabled reports whether any link uses TLS.
func (c Config) Enabled() bool { return c.HTTP || c.RPC }

// Check says what is missing for the links it turns on.
func (c Config) Check() error {
	if !c.Enabled() {
		return nil
	}
	var missing []string
	for _, f := range []struct{ name, v string }{{"ca_file", c.CAFile}, {"cert_file", c.CertFile}, {"key_file", c.KeyFile}} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("tls: %v must be set when TLS is enabled", missing)
	}
	return nil
}

// Loader holds an agent's certificate and CA, read from the files, and
// reads them again on Reload (SIGHUP): connections made after a reload
// use the new files, open ones go on.
type Loader struct {
	cfg  Config
	mu   sync.RWMutex
	cert *tls.Certificate
	pool *x509.CertPool
}

// NewLoader reads the files of cfg.
func NewLoader(cfg Config) (*Loader, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	l := &Loader{cfg: cfg}
	if err := l.Reload(); err != nil {
		return nil, err
	}
	return l, nil
}

// Config is what the loader was made from.
func (l *Loader) Config() Config { return l.cfg }

// Reload reads the certificate, key and CA again; on an error the old
// ones stay.
func (l *Loader) Reload() error {
	cert, err := tls.LoadX509KeyPair(l.cfg.CertFile, l.cfg.KeyFile)
	if err != nil {
		return fmt.Errorf("tls: certificate %s, key %s: %w", l.cfg.CertFile, l.cfg.KeyFile, err)
	}
	ca, err := os.ReadFile(l.cfg.CAFile)
	if err != nil {
		return fmt.Errorf("tls: ca_file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return fmt.Errorf("tls: ca_file %s holds no PEM certificate", l.cfg.CAFile)
	}
	l.mu.Lock()
	l.cert, l.pool = &cert, pool
	l.mu.Unlock()
	return nil
}

func (l *Loader) current() (*tls.Certificate, *x509.CertPool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cert, l.pool
}

// ServerConfig is the TLS config of a listener: the current certificate,
// and with requireClient a client certificate the current CA signed.
func (l *Loader) ServerConfig(requireClient bool) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			cert, pool := l.current()
			c := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{*cert}, ClientCAs: pool,
				ClientAuth: tls.VerifyClientCertIfGiven}
			if requireClient {
				c.ClientAuth = tls.RequireAndVerifyClientCert
			}
			return c, nil
		},
	}
}

// ClientConfig is the TLS config of a connection to another agent's API:
// this agent's certificate, the CA, and with VerifyServerHostname the name
// a server of region must have (else any certificate the CA signed).
func (l *Loader) ClientConfig(region string) *tls.Config {
	return l.PeerDialConfig(l.PeerNames(region, RoleServer))
}
