package remote

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/eventstream"
	"github.com/asynkron/protoactor-go/extensions"
	paremote "github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// extID registers a *Transport on its actor system, so that Request and
// Send, given only a RootContext, find the transport's timeout and the
// reachability of peers.
var extID = extensions.NextExtensionID()

// Transport is protoactor remote running on one actor system: it listens
// on the bind address and every local PID carries the advertised address.
type Transport struct {
	sys       *actor.ActorSystem
	r         *paremote.Remote
	addr      string
	aliases   map[string]bool
	log       *slog.Logger
	timeout   time.Duration
	sub       *eventstream.Subscription
	mu        sync.Mutex
	down      map[string]bool // peers whose endpoint terminated since it last connected
	closeOnce sync.Once
}

// ExtensionID makes Transport a protoactor extension of its actor system.
func (t *Transport) ExtensionID() extensions.ExtensionID { return extID }

// Start enables remoting on sys. Messages to PIDs with another address go
// over gRPC; named actors of sys become reachable at Address()/name.
func Start(sys *actor.ActorSystem, cfg Config) (*Transport, error) {
	if sys == nil {
		return nil, fmt.Errorf("%w: nil actor system", ErrInvalidConfig)
	}
	if _, err := transportOf(sys); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrAlreadyStarted, sys.Address())
	}
	cfg = cfg.withDefaults()
	a, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	t := &Transport{
		sys:     sys,
		addr:    a.advertise,
		aliases: map[string]bool{},
		log:     cfg.Logger,
		timeout: cfg.RequestTimeout,
		down:    map[string]bool{},
	}
	for _, al := range aliases(a) {
		t.aliases[al] = true
	}
	// Before remote's own resolver: aliases of ourselves resolve locally.
	sys.ProcessRegistry.RegisterAddressResolver(t.resolveAlias)
	opts := []paremote.ConfigOption{paremote.WithAdvertisedHost(a.advertise)}
	var serverOpts []grpc.ServerOption
	if cfg.ListenTLS != nil {
		serverOpts = append(serverOpts, grpc.Creds(credentials.NewTLS(cfg.ListenTLS)))
		opts = append(opts, paremote.WithDialOptions(grpc.WithTransportCredentials(credentials.NewTLS(cfg.DialTLS))))
	}
	if cfg.Guard != nil {
		serverOpts = append(serverOpts, grpc.StreamInterceptor(t.guardInterceptor(cfg.Guard)))
	}
	if len(serverOpts) > 0 {
		opts = append(opts, paremote.WithServerOptions(serverOpts...))
	}
	rc := paremote.Configure(a.bindHost, a.bindPort, opts...)
	rc.MaxRetryCount = cfg.ConnectAttempts
	t.r = paremote.NewRemote(sys, rc)
	if err := startRemote(t.r); err != nil {
		return nil, fmt.Errorf("%w: bind %s: %w", ErrStart, cfg.BindAddr, err)
	}
	t.sub = sys.EventStream.SubscribeWithPredicate(t.onEndpointEvent, isEndpointEvent)
	sys.Extensions.Register(t)
	t.log.Info("remote transport started", "bind", fmt.Sprintf("%s:%d", a.bindHost, a.bindPort), "advertise", t.addr,
		"tls", cfg.ListenTLS != nil)
	return t, nil
}

// startRemote runs protoactor's Start, which panics when it cannot listen.
func startRemote(r *paremote.Remote) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	r.Start()
	return nil
}

// Address is the advertised host:port that this system's PIDs carry.
func (t *Transport) Address() string { return t.addr }

// Shutdown stops the transport. Graceful tells connected peers to drop
// their endpoints and waits for their streams to close (protoactor gives
// up after 10 s); otherwise the gRPC server is stopped at once and peers
// find out when their next message fails. The actor system keeps running.
func (t *Transport) Shutdown(graceful bool) {
	t.closeOnce.Do(func() {
		t.sys.EventStream.Unsubscribe(t.sub)
		t.r.Shutdown(graceful)
		t.log.Info("remote transport stopped", "advertise", t.addr, "graceful", graceful)
	})
}

// resolveAlias routes PIDs addressed to another spelling of our own
// address to the local process (protoactor would otherwise forward them to
// itself over gRPC, forever).
func (t *Transport) resolveAlias(pid *actor.PID) (actor.Process, bool) {
	if !t.aliases[pid.Address] {
		return nil, false
	}
	return t.sys.ProcessRegistry.GetLocal(pid.Id)
}

func isEndpointEvent(m any) bool {
	switch m.(type) {
	case *paremote.EndpointTerminatedEvent, *paremote.EndpointConnectedEvent:
		return true
	}
	return false
}

// onEndpointEvent records which peers are unreachable. protoactor publishes
// EndpointTerminatedEvent before it dead-letters the requests queued for
// that peer, so a dead letter from a down peer is reported as unreachable.
func (t *Transport) onEndpointEvent(m any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch e := m.(type) {
	case *paremote.EndpointTerminatedEvent:
		t.down[e.Address] = true
	case *paremote.EndpointConnectedEvent:
		delete(t.down, e.Address)
	}
}

func (t *Transport) isDown(addr string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.down[addr]
}

// transportOf finds the Transport started on sys.
func transportOf(sys *actor.ActorSystem) (*Transport, error) {
	if sys == nil || sys.Extensions == nil {
		return nil, ErrNotStarted
	}
	t, ok := sys.Extensions.Get(extID).(*Transport)
	if !ok || t == nil {
		return nil, ErrNotStarted
	}
	return t, nil
}
