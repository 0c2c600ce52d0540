package acl

import "errors"

// ErrBadPolicy says a policy's rules do not parse or name something
// unknown (a block, a policy level, a capability); the message names it.
var ErrBadPolicy = errors.New("acl: invalid policy")
