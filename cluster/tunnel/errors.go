package tunnel

import "errors"

var (
	// ErrBroken is what reads return once the peer stopped, or the
	// transport lost it, before it closed the stream.
	ErrBroken = errors.New("tunnel: peer gone")
	// ErrNoAnswer breaks a tunnel whose peer sent nothing, not even a
	// keepalive, for the keepalive timeout (a region cut off, a server
	// killed): the error names the peer (its region on the dialing end).
	ErrNoAnswer = errors.New("tunnel: peer stopped answering")
	// ErrRefused is returned by Dial when the listener refused the
	// tunnel (it is not in the region asked for, or cannot dial).
	ErrRefused = errors.New("tunnel: refused")
	// ErrOutOfOrder breaks a stream whose data arrived out of sequence.
	ErrOutOfOrder = errors.New("tunnel: data out of order")
	// ErrOverrun breaks a stream whose peer sent more than its credit.
	ErrOverrun = errors.New("tunnel: data beyond the flow control window")
)
