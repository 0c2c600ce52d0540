package agent

import "errors"

var (
	// ErrConfig is returned for an invalid agent configuration.
	ErrConfig = errors.New("agent: invalid configuration")
	// ErrNotClient is returned for client calls on an agent without a client.
	ErrNotClient = errors.New("agent: this agent runs no client")
	// ErrNotServer is returned for server calls on a client-only agent.
	ErrNotServer = errors.New("agent: this agent runs no server")
	// ErrNoLeader is returned when no raft leader is known.
	ErrNoLeader = errors.New("agent: no cluster leader")
	// ErrUnknownAlloc is returned for an allocation the client does not know.
	ErrUnknownAlloc = errors.New("agent: unknown allocation")
	// ErrUnknownTask is returned for a task (or its log) that an allocation
	// the client knows does not have, or whose name would leave the
	// allocation dir.
	ErrUnknownTask = errors.New("agent: unknown task")
	// ErrRoleDenied refuses an RPC message the sender's role may not send
	// (a client's certificate sending a server's message).
	ErrRoleDenied = errors.New("agent: the sender's role may not send this message")
	// ErrTokenDenied refuses an RPC message its ACL token does not allow.
	ErrTokenDenied = errors.New("agent: Permission denied")
)

// errAgentStopping ends a wait for a leader when the agent shuts down.
var errAgentStopping = errors.New("agent: shutting down")

// noLeaderError is ErrNoLeader after a request waited the hold timeout
// (or its own context) for a leader; NoLeader tells the HTTP API to
// answer Nomad's 500 "No cluster leader".
type noLeaderError struct{ cause error }

func (e *noLeaderError) Error() string   { return ErrNoLeader.Error() + ": " + e.cause.Error() }
func (e *noLeaderError) Unwrap() []error { return []error{ErrNoLeader, e.cause} }

// NoLeader reports that no leader answered in time.
func (e *noLeaderError) NoLeader() bool { return true }
