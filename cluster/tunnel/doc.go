// Package tunnel carries a byte stream between two agents over the gRPC
// actor transport (cluster/remote), so that whatever runs over a TCP
// connection (an HTTP request and its streamed answer, a websocket) can
// run between agents that only reach each other's RPC port, with that
// port's mutual TLS. Federation uses it to forward a request for another
// region to one of that region's servers.
//
// One end listens: an actor spawned with Listener (under a name, e.g.
// "federation") answers each OpenTunnel by spawning an end actor and
// connecting it, in a goroutine it owns, to what its dial function
// returns (the server's own HTTP API). The other end dials:
//
//	conn, err := tunnel.Dial(ctx, root, "10.0.0.7:4647", "federation", "eu")
//
// returns a net.Conn whose writes travel as TunnelData messages to the
// listener's end and whose reads return what that end sends back. Each
// end watches the other: a peer that stops, or an agent the transport
// declares gone, breaks the connection (reads fail with ErrBroken)
// instead of leaving it hanging. Dial fails at ctx's deadline when no
// listener answers, so an unreachable region fails fast.
//
// There is no flow control: bytes queue in the receiving end's memory
// until they are read. The answers carried (API responses, log and event
// streams) are read as they come.
package tunnel
