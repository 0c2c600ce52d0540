package httpapi

import "errors"

var (
	// ErrUnknownNode is what a Backend's ActorTree and ClientStats return
	// for a node they cannot reach.
	ErrUnknownNode = errors.New("httpapi: unknown node")
	// ErrNoClient is what a Backend's ClientStats returns, asked for the
	// agent's own node, on an agent without a client.
	ErrNoClient = errors.New("httpapi: this agent runs no client: ask for a node with ?node_id=")
)
