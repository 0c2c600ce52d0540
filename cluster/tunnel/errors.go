package tunnel

import "errors"

var (
	// ErrBroken is what reads return once the peer stopped, or the
	// transport lost it, before it closed the stream.
	ErrBroken = errors.New("tunnel: peer gone")
	// ErrRefused is returned by Dial when the listener refused the
	// tunnel (it is not in the region asked for, or cannot dial).
	ErrRefused = errors.New("tunnel: refused")
	// ErrOutOfOrder breaks a stream whose data arrived out of sequence.
	ErrOutOfOrder = errors.New("tunnel: data out of order")
)
