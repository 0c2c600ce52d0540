package messages

import "fmt"

// ErrorCode is the code of a failed request (Error.Code). The field stays
// a string on the wire; Go code names these constants, builds errors with
// NewError or Errorf and reads the code with Error.ErrorCode.
type ErrorCode string

// Error codes.
const (
	// CodeNotLeader: the server is not the raft leader; LeaderRPCAddr names
	// the leader when it is known.
	CodeNotLeader ErrorCode = "not_leader"
	// CodeNotFound: what the request names does not exist.
	CodeNotFound ErrorCode = "not_found"
	// CodeInvalid: the request is wrong; it stays wrong.
	CodeInvalid ErrorCode = "invalid"
	// CodeUnavailable: the request could not be served now; it may be
	// tried again.
	CodeUnavailable ErrorCode = "unavailable"
	// CodeInternal: anything else.
	CodeInternal ErrorCode = "internal"
	// CodeConflict: the request collides with the current state (a claim
	// conflict, a volume in use, a job modify index that moved on).
	CodeConflict ErrorCode = "conflict"
	// CodePermissionDenied: the sender may not do what it asks (its role,
	// its ACL token or its workload identity does not allow it).
	CodePermissionDenied ErrorCode = "permission_denied"
)

// NewError is a failed request's Error with code and message.
func NewError(code ErrorCode, message string) *Error {
	return &Error{Code: string(code), Message: message}
}

// Errorf is NewError with a formatted message.
func Errorf(code ErrorCode, format string, args ...any) *Error {
	return NewError(code, fmt.Sprintf(format, args...))
}

// ErrorCode is the error's code ("" for a nil error).
func (x *Error) ErrorCode() ErrorCode { return ErrorCode(x.GetCode()) }
