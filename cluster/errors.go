package cluster

import "errors"

var (
	// ErrNotLeader is returned by Apply (wrapping raft.ErrNotLeader) on a
	// server that is not the leader: forward to Leader() instead.
	ErrNotLeader = errors.New("cluster: not the raft leader")
	// ErrLastVoter refuses to remove the only voting server.
	ErrLastVoter = errors.New("cluster: refusing to remove the last voter")
	// ErrUnknownServer is returned for a server ID not in the configuration.
	ErrUnknownServer = errors.New("cluster: unknown raft server")
	// ErrConfig is returned by NewRaft for an unusable RaftConfig.
	ErrConfig = errors.New("cluster: bad raft config")
)
