package remote

import (
	"errors"
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// Sentinel errors. Every error returned by this package wraps one of them
// (or is a *RemoteError) and names the address and actor involved.
var (
	// ErrInvalidConfig is a bind or advertise address that cannot be used.
	ErrInvalidConfig = errors.New("remote: invalid config")
	// ErrStart is a failure to start the transport (listen, endpoint manager).
	ErrStart = errors.New("remote: start failed")
	// ErrAlreadyStarted is a second Start on the same actor system.
	ErrAlreadyStarted = errors.New("remote: already started on this actor system")
	// ErrNotStarted is a Request or Send on an actor system without remoting.
	ErrNotStarted = errors.New("remote: transport not started on this actor system")
	// ErrInvalidRequest is a nil message, an empty address or an empty name.
	ErrInvalidRequest = errors.New("remote: invalid request")
	// ErrTimeout is a Request with no reply before its deadline.
	ErrTimeout = errors.New("remote: request timed out")
	// ErrUnreachable is a Request to an address that could not be connected.
	ErrUnreachable = errors.New("remote: address unreachable")
	// ErrNoActor is a Request that the remote system dead-lettered: no actor
	// of that name lives there.
	ErrNoActor = errors.New("remote: no such actor")
	// ErrUnexpectedReply is a reply of a type other than the one asked for.
	ErrUnexpectedReply = errors.New("remote: unexpected reply type")
)

// Error codes carried by messages.Error: messages.ErrorCode's values, as
// the string the Code fields hold (kept for the callers that still build
// and compare the string field directly).
const (
	CodeNotLeader   = string(messages.CodeNotLeader)
	CodeNotFound    = string(messages.CodeNotFound)
	CodeInvalid     = string(messages.CodeInvalid)
	CodeUnavailable = string(messages.CodeUnavailable)
	CodeInternal    = string(messages.CodeInternal)
	CodeConflict    = string(messages.CodeConflict)
	CodeDenied      = string(messages.CodePermissionDenied)
)

// RemoteError is a failure reported by the remote actor itself: either a
// *messages.Error reply or a reply whose Error field is set. Check it with
// errors.As; with Code "not_leader", retry on LeaderRPCAddr when it is set.
type RemoteError struct {
	Addr          string // the address the request went to
	Actor         string // the actor name it went to
	Code          string
	Message       string
	LeaderRPCAddr string
}

func (e *RemoteError) Error() string {
	s := fmt.Sprintf("remote: %s/%s replied %s: %s", e.Addr, e.Actor, e.Code, e.Message)
	if e.LeaderRPCAddr != "" {
		s += " (leader at " + e.LeaderRPCAddr + ")"
	}
	return s
}

// ErrorCode is the remote side's code.
func (e *RemoteError) ErrorCode() messages.ErrorCode { return messages.ErrorCode(e.Code) }

// NotLeader reports whether the remote side is not the raft leader; the
// leader's RPC address, when known, is in LeaderRPCAddr.
func (e *RemoteError) NotLeader() bool { return e.ErrorCode() == messages.CodeNotLeader }

// errorCarrier is every response with an `Error *messages.Error` field.
type errorCarrier interface {
	GetError() *messages.Error
}

// ReplyError returns the *RemoteError that reply carries, or nil: reply is
// a *messages.Error, or has a GetError() *messages.Error method returning
// a non-nil error. addr and actor name the request's target.
func ReplyError(reply any, addr, actor string) *RemoteError {
	var m *messages.Error
	switch r := reply.(type) {
	case *messages.Error:
		m = r
	case errorCarrier:
		m = r.GetError()
	}
	if m == nil {
		return nil
	}
	return &RemoteError{
		Addr:          addr,
		Actor:         actor,
		Code:          m.GetCode(),
		Message:       m.GetMessage(),
		LeaderRPCAddr: m.GetLeaderRPCAddr(),
	}
}

// Denied reports whether the remote refused the message: the sender's
// role or ACL token does not allow it.
func (e *RemoteError) Denied() bool { return e.ErrorCode() == messages.CodePermissionDenied }

// NotFound reports whether the remote side did not know what was named.
func (e *RemoteError) NotFound() bool { return e.ErrorCode() == messages.CodeNotFound }

// Conflict reports whether the remote refused a write that conflicts with
// the current state (a job modify index that moved on).
func (e *RemoteError) Conflict() bool { return e.ErrorCode() == messages.CodeConflict }
