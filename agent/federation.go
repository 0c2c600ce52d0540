package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"time"

	"github.com/troupe-dev/troupe/cluster/membership"
	"github.com/troupe-dev/troupe/cluster/tunnel"
	"github.com/troupe-dev/troupe/httpapi"
)

// Forwarding a request for another region: the server opens a tunnel
// (cluster/tunnel) over the gRPC actor transport to the "federation"
// actor of one of that region's servers, found in the WAN pool, which
// connects it to its own HTTP API. The request goes through unchanged
// (method, path, query, headers with the ACL token, body) and the answer
// streams back as it is written, so blocking queries, log and fs streams,
// the event stream and exec's websocket work as if asked there.

// federationActorName is the tunnel listener every server runs.
const federationActorName = "federation"

// regionOpenTimeout bounds the opening of a tunnel to another region: a
// region whose servers do not answer in that time is answered "No path
// to region" (while the WAN pool still lists them).
var regionOpenTimeout = 2 * time.Second

// startFederation spawns the tunnel listener (servers with a transport).
func (a *Agent) startFederation() error {
	props := tunnel.Listener(a.cfg.Region, a.dialOwnHTTP, a.log)
	if _, err := a.sys.Root.SpawnNamed(props, federationActorName); err != nil {
		return fmt.Errorf("agent: spawn federation actor: %w", err)
	}
	a.wg.Add(1)
	go a.everyUntilStop(a.multiregionRolloutInterval(), a.multiregionRolloutTick) // multiregion_rollout.go
	if a.replicatesACLs() {
		a.wg.Add(1)
		go a.everyUntilStop(a.aclReplicationInterval(), a.replicateACLsTick) // acl_replication.go
	}
	return nil
}

// dialOwnHTTP connects to this agent's HTTP API, over TLS when it is HTTPS
// (with this agent's certificate, as proxying between agents does).
func (a *Agent) dialOwnHTTP(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", a.HTTPAddr())
	if err != nil || !a.httpsOn() {
		return conn, err
	}
	tr, _ := a.proxyTransport().(*http.Transport)
	cfg := tr.TLSClientConfig.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return tc, nil
}

// RegionHandler answers requests for region from one of its servers
// (httpapi.Federation).
func (a *Agent) RegionHandler(region string) (http.Handler, error) {
	servers := a.regionServers(region)
	if len(servers) == 0 {
		return nil, fmt.Errorf("%w %q: no server of it is known", httpapi.ErrNoRegionPath, region)
	}
	tr := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return a.dialRegion(ctx, region, servers)
	}}
	return regionProxy(region, &httputil.ReverseProxy{ // federation_stream.go
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", region+".region"
			pr.Out.Host = pr.In.Host
		},
		Transport:     tr,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			httpapi.WriteRegionError(w, region, err)
		},
	}), nil
}

// dialRegion opens a tunnel to the first of servers (all tried at once)
// that answers within regionOpenTimeout; the others are cancelled (or
// closed, when they opened too).
func (a *Agent) dialRegion(ctx context.Context, region string, servers []membership.Member) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, regionOpenTimeout)
	defer cancel()
	type result struct {
		c   *tunnel.Conn
		err error
	}
	results := make(chan result, len(servers))
	for _, s := range servers {
		go func(addr string) {
			c, err := tunnel.Dial(ctx, a.sys.Root, addr, federationActorName, region)
			results <- result{c, err}
		}(s.Meta.RPCAddr)
	}
	var errs []error
	var won *tunnel.Conn
	for range servers {
		switch r := <-results; {
		case r.err != nil:
			errs = append(errs, r.err)
		case won == nil:
			won = r.c
			cancel()
		default:
			_ = r.c.Close()
		}
	}
	if won == nil {
		return nil, fmt.Errorf("%w %q: %w", httpapi.ErrNoRegionPath, region, errors.Join(errs...))
	}
	return won, nil
}
