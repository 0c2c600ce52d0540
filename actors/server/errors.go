package server

import "errors"

var (
	// errUnknownNode is returned for a controller RPC routed to a node
	// the state does not hold.
	errUnknownNode = errors.New("server: unknown node")
	// errNoClient is returned for a controller RPC routed to a node whose
	// client cannot be reached (it has no RPC address).
	errNoClient = errors.New("server: node has no reachable client")
	// errUnexpectedReply is returned when a client answers a controller
	// RPC with another message than a ControllerResponse.
	errUnexpectedReply = errors.New("server: unexpected reply")
	// ErrGC wraps the error of a garbage collection purge that did not
	// commit.
	ErrGC = errors.New("server: garbage collection failed")
)
