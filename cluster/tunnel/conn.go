package tunnel

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/messages"
)

// chunkSize bounds the bytes one TunnelData carries.
const chunkSize = 64 << 10

// Conn is one end of a tunnel as a net.Conn: reads drain what the peer
// sent (queued by this end's actor), writes go to the peer's actor as far
// as the peer's credit allows. Deadlines are not supported (the Set
// methods do nothing); Close, or the peer going away or going silent,
// ends blocked reads and writes.
type Conn struct {
	root       *actor.RootContext
	self, peer *actor.PID
	in         *pipe
	out        *credit
	set        settings

	wmu      sync.Mutex // orders writes: Seq follows the send order
	seq      uint64
	wclosed  bool
	closed   chan struct{}
	closeOne sync.Once
}

// newConn makes an end with set (its actor not spawned yet).
func newConn(root *actor.RootContext, set settings) *Conn {
	return &Conn{root: root, in: newPipe(set.ackThreshold()), out: newCredit(), set: set, closed: make(chan struct{})}
}

// props are the props of c's end actor; name is the peer as errors name
// it, peer its actor when known.
func (c *Conn) props(name string, peer *actor.PID) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &end{in: c.in, out: c.out, set: c.set, name: name, peer: peer}
	})
}

// open grants the peer the window once both ends know each other.
func (c *Conn) open() {
	c.in.allow(c.set.window)
	c.root.Send(c.peer, &messages.TunnelCredit{Bytes: uint64(c.set.window)})
}

// Read reads what the peer sent; io.EOF once it closed its side,
// ErrBroken when it went away first, ErrNoAnswer when it went silent.
func (c *Conn) Read(b []byte) (int, error) {
	n, grant, err := c.in.read(b, c.closed, net.ErrClosed)
	if grant > 0 {
		c.root.Send(c.peer, &messages.TunnelCredit{Bytes: uint64(grant)})
	}
	return n, err
}

// Write sends b to the peer, in chunks of at most chunkSize bytes, each
// when the peer has granted credit for it: a peer whose reader is slow
// makes Write wait.
func (c *Conn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.wclosed {
		return 0, net.ErrClosed
	}
	n := 0
	for len(b) > 0 {
		k, err := c.out.take(min(len(b), chunkSize), c.closed, net.ErrClosed)
		if err != nil {
			return n, err
		}
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

// fail closes the tunnel telling the peer why ("" for a plain close). It
// ends a write waiting for credit first, which holds the write lock.
func (c *Conn) fail(reason string) error {
	c.closeOne.Do(func() {
		close(c.closed)
		c.in.close(net.ErrClosed)
		_ = c.closeWrite(reason)
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

// SetWriteDeadline does nothing (not supported).
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

// broken is the pipe's error when it did not end cleanly (nil otherwise).
func (p *pipe) broken() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil || errors.Is(p.err, io.EOF) || errors.Is(p.err, net.ErrClosed) {
		return nil
	}
	return p.err
}
