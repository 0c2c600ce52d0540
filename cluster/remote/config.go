package remote

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"
)

// DefaultPort is the RPC port of an agent (Nomad's habit).
const DefaultPort = 4647

// DefaultRequestTimeout bounds every Request whose context has no
// deadline.
const DefaultRequestTimeout = 10 * time.Second

// DefaultConnectAttempts is how many times an endpoint dials a peer before
// it gives up and the pending requests fail with ErrUnreachable.
// protoactor waits 2 s after each failed attempt.
const DefaultConnectAttempts = 2

// Config is the transport's configuration. The zero value listens on an
// ephemeral loopback port.
type Config struct {
	// BindAddr is host:port to listen on; port 0 picks a free port and
	// an empty string means 127.0.0.1:0.
	BindAddr string
	// AdvertiseAddr is what peers dial and what every local PID carries:
	// host:port, or a bare host (the bound port is added). Empty means the
	// bind host, or the first private IPv4 when binding all interfaces.
	AdvertiseAddr string
	// Logger receives the transport's own lines (nil: discarded).
	Logger *slog.Logger
	// RequestTimeout bounds each Request whose context has no deadline
	// (0: DefaultRequestTimeout).
	RequestTimeout time.Duration
	// ConnectAttempts is the dials per endpoint before it is declared
	// unreachable (0: DefaultConnectAttempts).
	ConnectAttempts int
	// ListenTLS and DialTLS, both set or both nil, put mutual TLS on the
	// transport: the gRPC server takes ListenTLS, dials to peers DialTLS.
	ListenTLS, DialTLS *tls.Config
	// Guard checks every inbound message before it is delivered (the
	// sender's role from its certificate, the ACL token it carries); nil
	// delivers everything.
	Guard Guard
}

// addrs is a resolved Config: where to listen and what to advertise.
type addrs struct {
	bindHost  string
	bindPort  int
	advertise string
}

func (c Config) withDefaults() Config {
	if c.BindAddr == "" {
		c.BindAddr = "127.0.0.1:0"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.ConnectAttempts <= 0 {
		c.ConnectAttempts = DefaultConnectAttempts
	}
	return c
}

// resolve splits BindAddr, picks a free port when it is 0 and computes the
// advertised address.
func (c Config) resolve() (addrs, error) {
	if (c.ListenTLS == nil) != (c.DialTLS == nil) {
		return addrs{}, fmt.Errorf("%w: ListenTLS and DialTLS go together", ErrInvalidConfig)
	}
	host, port, err := splitHostPort(c.BindAddr)
	if err != nil {
		return addrs{}, fmt.Errorf("%w: bind %q: %w", ErrInvalidConfig, c.BindAddr, err)
	}
	// protoactor's Start panics when it cannot listen and cannot report
	// the port it got, so pick (port 0) or probe the port first.
	if port, err = probePort(host, port); err != nil {
		return addrs{}, fmt.Errorf("%w: bind %q: %w", ErrStart, c.BindAddr, err)
	}
	adv, err := advertise(c.AdvertiseAddr, host, port)
	if err != nil {
		return addrs{}, err
	}
	return addrs{bindHost: host, bindPort: port, advertise: adv}, nil
}

func splitHostPort(hp string) (string, int, error) {
	host, p, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("port %q out of range", p)
	}
	return host, port, nil
}

// probePort listens on host:port and closes it again, returning the port
// the kernel gave (a free one when port is 0).
func probePort(host string, port int) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// advertise computes the address peers dial.
func advertise(adv, bindHost string, port int) (string, error) {
	if adv == "" {
		host := bindHost
		if unspecified(host) {
			ip, err := privateIP()
			if err != nil {
				return "", fmt.Errorf("%w: binding all interfaces and no AdvertiseAddr: %w", ErrInvalidConfig, err)
			}
			host = ip
		}
		return net.JoinHostPort(host, strconv.Itoa(port)), nil
	}
	host, p, err := splitHostPort(adv)
	if err != nil {
		// a bare host, IPv6 included
		host, p = adv, 0
		if net.ParseIP(adv) == nil && !validHostname(adv) {
			return "", fmt.Errorf("%w: advertise %q", ErrInvalidConfig, adv)
		}
	}
	if unspecified(host) {
		return "", fmt.Errorf("%w: advertise %q is not dialable", ErrInvalidConfig, adv)
	}
	if p == 0 {
		p = port
	}
	return net.JoinHostPort(host, strconv.Itoa(p)), nil
}

func unspecified(host string) bool {
	if host == "" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

func validHostname(h string) bool {
	for _, r := range h {
		ok := r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !ok {
			return false
		}
	}
	return h != ""
}

// privateIP returns the first private IPv4 address of this host.
func privateIP() (string, error) {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return "", err
	}
	for _, a := range as {
		ipn, ok := a.(*net.IPNet)
		if ok && ipn.IP.To4() != nil && ipn.IP.IsPrivate() {
			return ipn.IP.String(), nil
		}
	}
	return "", fmt.Errorf("no private IPv4 address on this host")
}

// aliases are other spellings of this transport's own address (loopback
// names, the bind address) that peers or local code may use. Messages to
// them are delivered locally instead of being forwarded to ourselves.
func aliases(a addrs) []string {
	hosts := []string{a.bindHost}
	ip := net.ParseIP(a.bindHost)
	if unspecified(a.bindHost) || a.bindHost == "localhost" || ip != nil && ip.IsLoopback() {
		hosts = append(hosts, "localhost", "127.0.0.1", "::1")
	}
	if unspecified(a.bindHost) {
		hosts = append(hosts, interfaceIPs()...)
	}
	port := strconv.Itoa(a.bindPort)
	var out []string
	seen := map[string]bool{a.advertise: true}
	for _, h := range hosts {
		hp := net.JoinHostPort(h, port)
		if h != "" && !seen[hp] {
			seen[hp] = true
			out = append(out, hp)
		}
	}
	return out
}

func interfaceIPs() []string {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range as {
		if ipn, ok := a.(*net.IPNet); ok {
			out = append(out, ipn.IP.String())
		}
	}
	return out
}
