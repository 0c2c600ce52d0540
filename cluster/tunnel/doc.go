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
// Flow control bounds what a tunnel holds: each end grants its peer a
// window of credit (WithWindow, 1 MiB by default) when the tunnel opens,
// and more as its reader drains what came (TunnelCredit); a writer without
// credit waits. A slow reader (a follower of a forwarded log stream that
// reads slowly) therefore holds at most the window queued at its end,
// and the far writer waits, which pushes back on whatever it copies
// from.
//
// Keepalive: each end pings its peer every interval and breaks the tunnel
// when it heard nothing from it (data, credit, ping) for the timeout
// (WithKeepalive, 5 s and 15 s by default), on the clock WithClock gives
// (tests drive a fake one). Reads and writes then fail with ErrNoAnswer
// naming the peer (its region on the dialing end): a peer cut off or
// killed, which the transport may never report, ends the stream in
// bounded time.
package tunnel
