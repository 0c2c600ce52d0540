package tunnel

import (
	"errors"
	"net"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/messages"
)

// chunkSize bounds the bytes one TunnelData carries.
const chunkSize = 64 << 10

// Conn is one end of a tunnel as a net.Conn: reads drain what the peer
// sent (queued by this end's actor), writes go to the peer's actor.
// Deadlines are not supported (the Set methods do nothing); Close, or the
// peer going away, ends blocked reads.
type Conn struct {
	root       *actor.RootContext
	self, peer *actor.PID
	in         *pipe

	wmu      sync.Mutex // orders writes: Seq follows the send order
	seq      uint64
	wclosed  bool
	closed   chan struct{}
	closeOne sync.Once
}

func newConn(root *actor.RootContext, in *pipe) *Conn {
	return &Conn{root: root, in: in, closed: make(chan struct{})}
}

// Read reads what the peer sent; io.EOF once it closed its side,
// ErrBroken when it went away first.
func (c *Conn) Read(b []byte) (int, error) {
	return c.in.read(b, c.closed, net.ErrClosed)
}

// Write sends b to the peer, in chunks of at most chunkSize bytes.
func (c *Conn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.wclosed {
		return 0, net.ErrClosed
	}
	if err := c.in.broken(); err != nil {
		return 0, err
	}
	n := 0
	for len(b) > 0 {
		k := min(len(b), chunkSize)
		c.seq++
		c.root.Send(c.peer, &messages.TunnelData{Seq: c.seq, Data: append([]byte(nil), b[:k]...)})
		b, n = b[k:], n+k
	}
	return n, nil
}

// CloseWrite tells the peer that this end sends no more (its reads then
// return io.EOF); reads here go on.
func (c *Conn) CloseWrite() error { return c.closeWrite("") }

func (c *Conn) closeWrite(reason string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.wclosed {
		return nil
	}
	c.wclosed = true
	c.root.Send(c.peer, &messages.TunnelClosed{Error: reason})
	return nil
}

// Close closes both directions and stops this end's actor (the peer sees
// it go).
func (c *Conn) Close() error { return c.fail("") }

// fail closes the tunnel telling the peer why ("" for a plain close).
func (c *Conn) fail(reason string) error {
	c.closeOne.Do(func() {
		_ = c.closeWrite(reason)
		close(c.closed)
		c.in.close(net.ErrClosed)
		c.root.Stop(c.self)
	})
	return nil
}

// LocalAddr is this end's actor.
func (c *Conn) LocalAddr() net.Addr { return addr{c.self} }

// RemoteAddr is the peer's actor.
func (c *Conn) RemoteAddr() net.Addr { return addr{c.peer} }

// SetDeadline does nothing (not supported).
func (c *Conn) SetDeadline(time.Time) error { return nil }

// SetReadDeadline does nothing (not supported).
func (c *Conn) SetReadDeadline(time.Time) error { return nil }

// SetWriteDeadline does nothing (writes never block).
func (c *Conn) SetWriteDeadline(time.Time) error { return nil }

var _ net.Conn = (*Conn)(nil)

// addr is an end's actor as a net.Addr.
type addr struct{ pid *actor.PID }

func (a addr) Network() string { return "actor" }
func (a addr) String() string {
	if a.pid == nil {
		return ""
	}
	return a.pid.Address + "/" + a.pid.Id
}

// broken is the pipe's error when the peer went away (nil otherwise).
func (p *pipe) broken() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if errors.Is(p.err, ErrBroken) || errors.Is(p.err, ErrOutOfOrder) {
		return p.err
	}
	return nil
}
