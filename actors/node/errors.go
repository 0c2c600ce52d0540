package node

import "errors"

// ErrNoServer is returned when the client has no server to talk to.
var ErrNoServer = errors.New("node: no server reachable")
