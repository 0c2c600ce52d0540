// Package membership is troupe's gossip membership, built on
// hashicorp/memberlist: every agent, server or client, is one member of one
// memberlist per region, and tells the others who it is through a small
// metadata record (Meta: role, region, datacenter, node ID and name, RPC and
// HTTP addresses, build, raft voter flag, bootstrap_expect).
//
// Use:
//
//	m, err := membership.New(membership.Config{
//		BindAddr: "0.0.0.0", BindPort: 4648,
//		Meta: membership.Meta{Role: membership.RoleServer, Region: "global",
//			Datacenter: "dc1", NodeID: id, NodeName: "s1",
//			RPCAddr: "10.0.0.1:4647", HTTPAddr: "10.0.0.1:4646",
//			Voter: true, BootstrapExpect: 3},
//		Logger: logger,
//	})
//	n, err := m.Join([]string{"10.0.0.2:4648"}) // retry with backoff while n == 0 && !membership.IsRefused(err)
//	for ev := range m.Events() { ... }           // join, update, leave, failed
//	servers := m.Servers()                      // alive servers, for clients
//	...
//	m.Leave(5 * time.Second)                    // then
//	m.Shutdown()
//
// With Config.WAN the member joins the servers' WAN pool instead, which
// federates regions: servers only (a client is refused with
// ErrNotServer), of any region, on memberlist's WAN timing; Meta.Leader
// tells the other regions which server leads its own.
//
// Members are refused, and the cluster stays unchanged, when they are in
// another region, when a live member already holds their node name with
// another node ID (or their node ID under another name), or when their
// metadata does not decode. The check runs on both sides of a push/pull
// join (memberlist's MergeDelegate, so the joiner's Join fails with a
// *JoinError whose errors.Is matches ErrWrongRegion, ErrDuplicateName...)
// and on every alive message (AliveDelegate, so a refused node cannot come
// in by gossip).
//
// memberlist does not say whether a dead member left or failed, so Leave
// first gossips a "leaving" flag in the metadata (status "leaving"), then
// memberlist's leave; members that saw the flag record "left", others
// "failed". Left and failed members stay in Members for Config.ReapAfter.
// memberlist's "suspect" state is not observable through its API.
//
// memberlist's own log lines go to Config.Logger: its DEBUG and INFO lines
// at slog Debug, WARN and ERR at Warn; with no Logger nothing is printed.
package membership
