package clientstate

import "errors"

// ErrClosed is returned by writes after Close.
var ErrClosed = errors.New("clientstate: closed")
