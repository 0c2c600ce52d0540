package tunnel

import (
	"fmt"
	"io"
	"sync"
)

// pipe is the receiving side of one direction of a tunnel: a queue of
// byte chunks with one reader, bounded by flow control. An end actor
// pushes what arrives (never blocking its mailbox) and a reader drains
// it. The peer may send only what this side granted (allow), so at most
// the window is queued; a peer that sends more breaks the pipe.
type pipe struct {
	mu      sync.Mutex
	ready   chan struct{} // closed and replaced whenever data or the end arrives
	chunks  [][]byte
	err     error // set once: io.EOF, ErrBroken, ...
	allowed int   // bytes the peer may still send
	unacked int   // bytes read and not yet granted back
	ackAt   int   // unacked bytes that make a grant

	buffered, maxBuffered int // bytes queued now, and the most ever (tests)
}

func newPipe(ackAt int) *pipe { return &pipe{ready: make(chan struct{}), ackAt: max(ackAt, 1)} }

// allow lets the peer send n more bytes (the window, when the tunnel
// opens).
func (p *pipe) allow(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.allowed += n
}

// push appends b (dropped once the pipe is closed); more than the peer
// was allowed breaks the pipe with ErrOverrun.
func (p *pipe) push(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil || len(b) == 0 {
		return
	}
	if len(b) > p.allowed {
		p.closeLocked(fmt.Errorf("%w: %d bytes with credit for %d", ErrOverrun, len(b), p.allowed))
		return
	}
	p.allowed -= len(b)
	p.buffered += len(b)
	p.maxBuffered = max(p.maxBuffered, p.buffered)
	p.chunks = append(p.chunks, b)
	p.wakeLocked()
}

// close ends the pipe: reads return what is queued, then err. Only the
// first close counts.
func (p *pipe) close(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeLocked(err)
}

func (p *pipe) closeLocked(err error) {
	if p.err != nil {
		return
	}
	if err == nil {
		err = io.EOF
	}
	p.err = err
	p.wakeLocked()
}

func (p *pipe) wakeLocked() {
	close(p.ready)
	p.ready = make(chan struct{})
}

// read copies queued bytes into b, waiting for some, or for the end, or
// for abort to close (then it returns abortErr). grant is the credit to
// give the peer back now (0: not yet), once a quarter window was read.
func (p *pipe) read(b []byte, abort <-chan struct{}, abortErr error) (n, grant int, err error) {
	for {
		p.mu.Lock()
		if len(p.chunks) > 0 {
			n := copy(b, p.chunks[0])
			if n == len(p.chunks[0]) {
				p.chunks[0] = nil
				p.chunks = p.chunks[1:]
			} else {
				p.chunks[0] = p.chunks[0][n:]
			}
			p.buffered -= n
			p.unacked += n
			if p.unacked >= p.ackAt && p.err == nil {
				grant, p.unacked = p.unacked, 0
				p.allowed += grant
			}
			p.mu.Unlock()
			return n, grant, nil
		}
		if p.err != nil {
			err := p.err
			p.mu.Unlock()
			return 0, 0, err
		}
		ready := p.ready
		p.mu.Unlock()
		select {
		case <-ready:
		case <-abort:
			return 0, 0, abortErr
		}
	}
}

// peak is the most bytes ever queued unread.
func (p *pipe) peak() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.maxBuffered
}
