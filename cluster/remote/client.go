package remote

import (
	"context"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"
)

// Client is for programs that are not agents (the CLI, tests, tools): it
// runs its own small actor system with remoting, so that agents can send
// replies back to it. The agent must be able to dial the client's
// address: the default loopback bind only works for agents on this host;
// use "0.0.0.0:0" (and AdvertiseAddr if needed) to reach other hosts.
type Client struct {
	sys *actor.ActorSystem
	t   *Transport
}

// NewClient starts a client listening on bind ("" means 127.0.0.1:0).
func NewClient(bind string, logger *slog.Logger) (*Client, error) {
	return NewClientConfig(Config{BindAddr: bind, Logger: logger})
}

// NewClientConfig starts a client with a full transport Config.
func NewClientConfig(cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	sys := actor.NewActorSystemWithConfig(actor.Configure(
		actor.WithLoggerFactory(LoggerFactory(cfg.Logger)),
		actor.WithDeadLetterThrottleCount(3),
	))
	t, err := Start(sys, cfg)
	if err != nil {
		sys.Shutdown()
		return nil, err
	}
	return &Client{sys: sys, t: t}, nil
}

// Request sends req to the actor named name at addr and returns its reply;
// see the package-level Request for the errors. Use
// Request[T](ctx, c.Root(), ...) for a typed reply.
func (c *Client) Request(ctx context.Context, addr, name string, req proto.Message) (proto.Message, error) {
	return Request[proto.Message](ctx, c.Root(), addr, name, req)
}

// Send delivers msg to the actor named name at addr, fire-and-forget.
func (c *Client) Send(addr, name string, msg proto.Message) error {
	return Send(c.Root(), addr, name, msg)
}

// Root is the client's root context, for the generic Request.
func (c *Client) Root() *actor.RootContext { return c.sys.Root }

// Address is the client's advertised address (where replies come back).
func (c *Client) Address() string { return c.t.Address() }

// Close stops the transport gracefully and the actor system.
func (c *Client) Close() {
	c.t.Shutdown(true)
	c.sys.Shutdown()
}
