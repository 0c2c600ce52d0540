package httpapi

import "errors"

var (
	// ErrUnknownNode is what a Backend's ActorTree and ClientStats return
	// for a node they cannot reach.
	ErrUnknownNode = errors.New("httpapi: unknown node")
	// ErrNoClient is what a Backend's ClientStats returns, asked for the
	// agent's own node, on an agent without a client.
	// ErrNoRegionPath is the error (Nomad's text) of a request for a
	// region that no known server of answers; the API answers it 500.
	ErrNoRegionPath = errors.New("No path to region")
	ErrNoClient     = errors.New("httpapi: this agent runs no client: ask for a node with ?node_id=")
)
