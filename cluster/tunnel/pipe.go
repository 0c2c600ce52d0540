package tunnel

import (
	"io"
	"sync"
)

// pipe is an unbounded queue of byte chunks with one reader: an end actor
// pushes what arrives (never blocking its mailbox) and a reader drains it.
type pipe struct {
	mu     sync.Mutex
	ready  chan struct{} // closed and replaced whenever data or the end arrives
	chunks [][]byte
	err    error // set once: io.EOF, ErrBroken, ...
}

func newPipe() *pipe { return &pipe{ready: make(chan struct{})} }

// push appends b (dropped once the pipe is closed).
func (p *pipe) push(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil || len(b) == 0 {
		return
	}
	p.chunks = append(p.chunks, b)
	p.wakeLocked()
}

// close ends the pipe: reads return what is queued, then err. Only the
// first close counts.
func (p *pipe) close(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
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
// for abort to close (then it returns abortErr).
func (p *pipe) read(b []byte, abort <-chan struct{}, abortErr error) (int, error) {
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
			p.mu.Unlock()
			return n, nil
		}
		if p.err != nil {
			err := p.err
			p.mu.Unlock()
			return 0, err
		}
		ready := p.ready
		p.mu.Unlock()
		select {
		case <-ready:
		case <-abort:
			return 0, abortErr
		}
	}
}
