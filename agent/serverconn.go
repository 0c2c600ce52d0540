package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors/node"
	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/messages"
)

// serverConn is a client's connection to the servers. Every call is a
// request to a server actor: this agent's own when it is also a server,
// else one of the known servers over the actor transport. A server that
// does not lead answers not_leader with the leader's address, and the
// call follows it; an unreachable server makes the call try the next one.
type serverConn struct {
	a       *Agent
	mu      sync.Mutex
	servers []string // RPC addresses; "" is this agent's own server actor
	cur     int
}

func newServerConn(a *Agent) *serverConn {
	c := &serverConn{a: a}
	if a.cfg.Server {
		c.servers = []string{""}
	}
	for _, s := range a.cfg.Servers {
		c.servers = append(c.servers, rpcAddrOf(s, a.cfg.RPCPort))
	}
	return c
}

// call sends req to a server, following not_leader redirects and moving
// past unreachable servers; every server is tried at most once per call.
func (c *serverConn) call(ctx context.Context, req proto.Message) (proto.Message, error) {
	c.mu.Lock()
	order := make([]string, 0, len(c.servers))
	order = append(append(order, c.servers[c.cur:]...), c.servers[:c.cur]...)
	c.mu.Unlock()
	order = c.aliveFirst(order)
	var errs []error
	tried := map[string]bool{}
	for len(order) > 0 {
		addr := order[0]
		order = order[1:]
		if tried[addr] {
			continue
		}
		tried[addr] = true
		resp, err := c.send(ctx, addr, req)
		var re *remote.RemoteError
		switch {
		case err == nil:
			c.prefer(addr)
			return resp, nil
		case errors.As(err, &re) && re.NotLeader() && re.LeaderRPCAddr != "":
			order = append([]string{c.leaderAddr(re.LeaderRPCAddr)}, order...)
		case errors.As(err, &re):
			return resp, err
		case ctx.Err() != nil:
			return nil, err
		case errors.Is(err, remote.ErrNoActor):
			err = fmt.Errorf("%s is not a troupe server (it runs no server actor): %w", addr, err)
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("agent: no server answered: %w", errors.Join(errs...))
}

// aliveFirst moves servers that gossip reports failed or gone to the end,
// so a call does not wait on a dead leader's address.
func (c *serverConn) aliveFirst(order []string) []string {
	if c.a.members == nil {
		return order
	}
	alive := map[string]bool{"": true}
	for _, m := range c.a.members.Servers() {
		alive[m.Meta.RPCAddr] = true
	}
	var up, down []string
	for _, addr := range order {
		if alive[addr] {
			up = append(up, addr)
		} else {
			down = append(down, addr)
		}
	}
	return append(up, down...)
}

// leaderAddr is "" (this agent) when the leader is this agent's server.
func (c *serverConn) leaderAddr(addr string) string {
	if addr == c.a.RPCAddr() && c.a.cfg.Server {
		return ""
	}
	return addr
}

func (c *serverConn) send(ctx context.Context, addr string, req proto.Message) (proto.Message, error) {
	if addr == "" {
		res, err := c.a.requestLocal(ctx, c.a.serverPID, req, 10*time.Second)
		if err != nil {
			return nil, fmt.Errorf("agent: local server: %w", err)
		}
		msg, _ := res.(proto.Message)
		if re := remote.ReplyError(res, c.a.RPCAddr(), "server"); re != nil {
			return msg, re
		}
		return msg, nil
	}
	return remote.Request[proto.Message](ctx, c.a.sys.Root, addr, "server", req)
}

// prefer remembers the server that answered, so the next call starts there.
func (c *serverConn) prefer(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, s := range c.servers {
		if s == addr {
			c.cur = i
			return
		}
	}
	c.servers = append(c.servers, addr)
	c.cur = len(c.servers) - 1
}

// learn adds servers a response named.
func (c *serverConn) learn(addrs []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range addrs {
		a = c.leaderAddr(a)
		known := false
		for _, s := range c.servers {
			known = known || s == a
		}
		if !known {
			c.servers = append(c.servers, a)
		}
	}
}

// RegisterNode implements node.ServerConn.
func (c *serverConn) RegisterNode(ctx context.Context, n *messages.Node) (time.Duration, error) {
	n.RPCAddr, n.HTTPAddr = c.a.RPCAddr(), c.a.HTTPAddr()
	resp, err := c.call(ctx, &messages.RegisterNodeRequest{Node: n})
	if err != nil {
		return 0, err
	}
	r, ok := resp.(*messages.RegisterNodeResponse)
	if !ok {
		return 0, fmt.Errorf("agent: register: unexpected reply %T", resp)
	}
	c.learn(r.GetServers())
	return time.Duration(r.GetHeartbeatTTL()), nil
}

// Heartbeat implements node.ServerConn.
func (c *serverConn) Heartbeat(ctx context.Context, nodeID string, allocsIndex uint64) (node.HeartbeatReply, error) {
	resp, err := c.call(ctx, &messages.NodeHeartbeat{NodeID: nodeID, AllocsIndex: allocsIndex, NodeSecretID: c.a.nodeSecret})
	if err != nil {
		return node.HeartbeatReply{}, err
	}
	r, ok := resp.(*messages.NodeHeartbeatResponse)
	if !ok {
		return node.HeartbeatReply{}, fmt.Errorf("agent: heartbeat: unexpected reply %T", resp)
	}
	c.learn(r.GetServers())
	return node.HeartbeatReply{TTL: time.Duration(r.GetHeartbeatTTL()), Resend: r.GetResendAllocs()}, nil
}

// UpdateAllocs implements node.ServerConn.
func (c *serverConn) UpdateAllocs(ctx context.Context, allocs []*messages.Allocation) error {
	_, err := c.call(ctx, &messages.UpdateAllocsRequest{NodeID: c.a.local.LocalNodeID, Allocs: allocs, NodeSecretID: c.a.nodeSecret})
	return err
}

// UpsertPlugins implements node.ServerConn.
func (c *serverConn) UpsertPlugins(ctx context.Context, up *messages.UpsertPluginInstances) error {
	up.NodeSecretID = c.a.nodeSecret
	_, err := c.call(ctx, up)
	return err
}

// requestLocal asks an actor of this agent and waits for its answer until
// ctx's deadline, or for def without one. An expired deadline fails at
// once: a future whose timeout is 0 or less never times out.
func (a *Agent) requestLocal(ctx context.Context, pid *actor.PID, req any, def time.Duration) (any, error) {
	d := def
	if dl, ok := ctx.Deadline(); ok {
		if d = time.Until(dl); d <= 0 {
			return nil, context.DeadlineExceeded
		}
	}
	return a.sys.Root.RequestFuture(pid, req, d).Result()
}
