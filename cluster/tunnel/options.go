package tunnel

import (
	"time"

	"github.com/troupe-dev/troupe/actors"
)

// Defaults of a tunnel's flow control and keepalive.
const (
	// DefaultWindow is the bytes an end may have sent and not yet read at
	// the other (per direction): what a slow reader holds at most.
	DefaultWindow = 1 << 20
	// DefaultKeepaliveInterval is how often each end pings its peer.
	DefaultKeepaliveInterval = 5 * time.Second
	// DefaultKeepaliveTimeout is how long an end waits to hear from its
	// peer before it breaks the tunnel.
	DefaultKeepaliveTimeout = 15 * time.Second
)

// Option changes a tunnel end's settings (Dial, Listener).
type Option func(*settings)

// settings are an end's flow control window, keepalive and clock.
type settings struct {
	window            int
	keepaliveInterval time.Duration
	keepaliveTimeout  time.Duration
	clock             actors.Clock
}

func newSettings(opts []Option) settings {
	s := settings{window: DefaultWindow, keepaliveInterval: DefaultKeepaliveInterval,
		keepaliveTimeout: DefaultKeepaliveTimeout, clock: actors.RealClock{}}
	for _, o := range opts {
		o(&s)
	}
	return s
}

// WithWindow sets the flow control window in bytes: the credit this end
// grants its peer when the tunnel opens (each end announces its own).
func WithWindow(bytes int) Option {
	return func(s *settings) {
		if bytes > 0 {
			s.window = bytes
		}
	}
}

// WithKeepalive sets how often an end pings its peer and how long it
// waits to hear from it before breaking the tunnel with ErrNoAnswer.
func WithKeepalive(interval, timeout time.Duration) Option {
	return func(s *settings) {
		if interval > 0 && timeout > 0 {
			s.keepaliveInterval, s.keepaliveTimeout = interval, timeout
		}
	}
}

// WithClock sets the clock the keepalive timer runs on (tests drive a
// fake one).
func WithClock(c actors.Clock) Option {
	return func(s *settings) {
		if c != nil {
			s.clock = c
		}
	}
}

// ackThreshold is how many read bytes the receiver gathers before it
// grants them back: a quarter of the window, so that the sender rarely
// waits, and at most a chunk per credit message for small windows.
func (s settings) ackThreshold() int { return max(s.window/4, 1) }
