package server

import "errors"

var (
	// ErrUnknownNode is returned for a controller RPC routed to a node
	// the state does not hold.
	ErrUnknownNode = errors.New("server: unknown node")
	// ErrNoClient is returned for a controller RPC routed to a node whose
	// client cannot be reached (it has no RPC address).
	ErrNoClient = errors.New("server: node has no reachable client")
	// ErrUnexpectedReply is returned when a client answers a controller
	// RPC with another message than a ControllerResponse.
	ErrUnexpectedReply = errors.New("server: unexpected reply")
)
