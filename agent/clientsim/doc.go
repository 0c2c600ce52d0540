// Package clientsim simulates many troupe clients against a real server
// agent, for `troupe bench clients` and its tests.
//
// A Sim is one remote endpoint (one protoactor gRPC transport) holding
// many node identities. Each simulated node registers with the leader's
// "server" actor (RegisterNodeRequest) and then heartbeats on its own
// timer (NodeHeartbeat) at half the TTL the leader answered, as the real
// client actor does; every registration and heartbeat is a request and
// response through the transport, and its round trip is recorded. The
// Sim's "client" actor takes the allocation sets the leader pushes
// (SetClientAllocs), keeps each node's newest set index for its next
// heartbeat, and reports every new allocation as running
// (UpdateAllocsRequest), so the allocations behave as on real clients.
// Stop ends some nodes' heartbeats at once, as if their hosts died.
//
// Server starts `troupe agent -server` as a child process on loopback
// (the process's CPU time is read from /proc, so the agent's share is
// measured apart from the simulator's), and Run plays the whole bench:
// register, place a job, heartbeat steadily, stop some nodes, and wait
// until the leader has marked every stopped node down with its
// node-update evaluation:
//
//	srv, err := clientsim.StartServer(ctx, clientsim.ServerConfig{Exe: exe, Args: []string{"agent"},
//		MinTTL: 2 * time.Second, Grace: time.Second, MaxHeartbeatsPerSecond: 500})
//	defer srv.Stop()
//	res, err := clientsim.Run(ctx, srv, clientsim.Scenario{Nodes: 10000, Stop: 100, Steady: time.Minute})
//	res.Print(os.Stdout)
package clientsim
