// Package remote is troupe's remote actor transport: protoactor-go remote
// (gRPC, port 4647 by default) started on an agent's actor system, and a
// small typed API that lets any Go program send protobuf messages from
// package messages to a named actor on any agent.
//
// # Agents
//
// An agent starts remoting once on its actor system; after that every
// named actor (server, client, nodes/ID, volumes/ID, ...) is reachable as
// PID(t.Address(), name) from other hosts:
//
//	sys := actor.NewActorSystemWithConfig(actor.Configure(
//		actor.WithLoggerFactory(remote.LoggerFactory(logger)), // protoactor's Info lines become Debug
//	))
//	t, err := remote.Start(sys, remote.Config{
//		BindAddr:      "0.0.0.0:4647",
//		AdvertiseAddr: "10.0.0.2", // the bound port is added
//		Logger:        logger,
//	})
//	defer t.Shutdown(true)
//
// Addresses must be spelled as the target advertises them (t.Address(),
// the RPC address carried in membership and raft): a PID's address is how
// protoactor tells local from remote. Loopback spellings (localhost,
// 127.0.0.1, ::1) and the bind address are accepted as aliases.
//
// # Requests
//
// Request sends one message and waits for the reply, typed by the caller.
// A server asks the leader to register a node:
//
//	resp, err := remote.Request[*messages.RegisterNodeResponse](ctx, sys.Root,
//		leaderAddr, "server", &messages.RegisterNodeRequest{Node: node})
//	var re *remote.RemoteError
//	if errors.As(err, &re) && re.NotLeader() && re.LeaderRPCAddr != "" {
//		// retry on re.LeaderRPCAddr
//	}
//
// Every Request is bounded by ctx's deadline, or by
// Config.RequestTimeout (10 s by default) when ctx has none, and never
// hangs. Errors name the
// address and the actor and wrap one of: ErrTimeout (no reply in time;
// also context.DeadlineExceeded when ctx set the bound), ErrUnreachable
// (the connection to the address failed), ErrNoActor (the remote system
// dead-lettered the message: no actor of that name), ErrUnexpectedReply
// (wrong reply type, both types named). A reply that is a *messages.Error,
// or whose Error field is set (RegisterNodeResponse.Error, ...), comes
// back as a *RemoteError with its Code (not_leader, not_found, invalid,
// unavailable, internal); in the second case the reply is returned too.
// Replying actors just ctx.Respond with the response message.
//
// Send is fire-and-forget (the leader pushing SetClientAllocs to a client).
//
// # Programs that are not agents
//
// A Client runs its own small actor system with remoting so that replies
// can come back. A program asking the agent on this host for its actor
// tree:
//
//	c, err := remote.NewClient("127.0.0.1:0", logger)
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
//	defer cancel()
//	tree, err := remote.Request[*messages.ActorTreeResponse](ctx, c.Root(),
//		"127.0.0.1:4647", "client", &messages.GetActorTree{})
//	if err != nil {
//		return err
//	}
//	for _, a := range tree.GetActors() {
//		fmt.Println(a.GetPath(), a.GetPhase())
//	}
//
// and one sending a heartbeat to the server actor of an agent on another
// host (bind all interfaces so that the agent can dial the reply back):
//
//	c, err := remote.NewClient("0.0.0.0:0", logger)
//	...
//	reply, err := c.Request(ctx, "10.0.0.2:4647", "server", &messages.NodeHeartbeat{NodeID: id})
//	hb, ok := reply.(*messages.NodeHeartbeatResponse)
//
// # protoactor caveats
//
// protoactor-go's Remote.Start sets grpc's global logger on every call and
// its endpoint manager is not race-free at shutdown, so a process should
// run one transport (the race detector flags two in one process); the
// tests run their peer in a child process for that reason. A peer that
// cannot be dialled is retried ConnectAttempts times, 2 s apart, blocking
// only that peer's endpoint; a graceful Shutdown waits for such attempts.
package remote
