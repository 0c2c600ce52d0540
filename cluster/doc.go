// Package cluster holds what servers share: raft replication and leader
// election here, membership (cluster/membership) and the remote actor
// transport (cluster/remote) beside it, and the replicated state and its
// FSM in cluster/state.
//
// NewRaft starts hashicorp/raft over a raft.FSM (state.NewFSM):
//
//	store := state.NewStore()
//	fsm := state.NewFSM(store, logger)
//	r, err := cluster.NewRaft(cluster.RaftConfig{
//		NodeID: "server-1", DataDir: dataDir, BindAddr: "0.0.0.0:4647",
//		Advertise: "10.0.0.5:4647", Bootstrap: true, Logger: logger,
//	}, fsm)
//	defer r.Shutdown()
//	resp, index, err := r.Apply(ctx, &messages.Command{Cmd: ...})
//
// Storage: raft-boltdb/v2 at DataDir/raft/raft.db (log, behind a small
// cache, and stable store) and file snapshots under DataDir/raft/snapshots
// (two kept). A restart with the same DataDir restores the latest snapshot
// and replays the log after it into the FSM, so the store comes back whole.
// An empty DataDir keeps everything in memory.
//
// Transport: TCP on BindAddr, or, with BindAddr empty (dev mode, one server
// in one process), raft's in-memory transport with short timeouts.
//
// Bootstrap makes a one-server cluster when there is no raft state yet;
// more servers join with AddVoter on the leader. Apply answers ErrNotLeader
// on a follower: forward to Leader(). RemoveServer refuses to remove the
// last voter.
//
// Raft's logs go to the configured slog.Logger through an hclog adapter
// that demotes raft's info messages (and the routine first election) to
// debug, so an agent at the default level prints only raft's warnings and
// errors.
package cluster
