package tunnel

import "sync"

// credit is the sending side of flow control: the bytes an end may still
// send, granted by its peer (TunnelCredit) and spent by writes. A write
// waits while there is none, until the peer grants more or the tunnel
// ends.
type credit struct {
	mu    sync.Mutex
	avail int
	ready chan struct{} // closed and replaced whenever credit or the end arrives
	err   error
}

func newCredit() *credit { return &credit{ready: make(chan struct{})} }

// grant adds n bytes of credit.
func (c *credit) grant(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.avail += n
	close(c.ready)
	c.ready = make(chan struct{})
}

// close ends the credit: waiting and later takes fail with err (the first
// close counts).
func (c *credit) close(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	close(c.ready)
	c.ready = make(chan struct{})
}

// take spends up to n bytes of credit, waiting for some, or for the end,
// or for abort to close (then it returns abortErr).
func (c *credit) take(n int, abort <-chan struct{}, abortErr error) (int, error) {
	for {
		c.mu.Lock()
		if c.err != nil {
			err := c.err
			c.mu.Unlock()
			return 0, err
		}
		if c.avail > 0 {
			k := min(n, c.avail)
			c.avail -= k
			c.mu.Unlock()
			return k, nil
		}
		ready := c.ready
		c.mu.Unlock()
		select {
		case <-ready:
		case <-abort:
			return 0, abortErr
		}
	}
}
