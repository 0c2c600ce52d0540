package agent

import (
	"crypto/tls"
	"net"
	"net/http"
	"time"

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
// API: over HTTPS with its own certificate when the API is HTTPS (every
// agent of a cluster serves the same), else nil (plain HTTP).
func (a *Agent) proxyTransport() http.RoundTripper {
	if !a.httpsOn() {
		return nil
	}
	return &http.Transport{
		Proxy:               nil,
		TLSClientConfig:     a.tls.ClientConfig(a.cfg.Region),
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
	}
}
