package dispatch

import "errors"

// ErrInvalid is a dispatch request that breaks the parent's parameterized
// block or Nomad's limits; the error says which rule. Nothing is created.
var ErrInvalid = errors.New("dispatch: invalid request")
