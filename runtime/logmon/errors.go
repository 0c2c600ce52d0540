package logmon

import "errors"

var (
	// ErrSpec is a malformed or incomplete forwarder spec.
	ErrSpec = errors.New("logmon: invalid spec")
	// ErrStart is a forwarder that did not get ready.
	ErrStart = errors.New("logmon: forwarder failed to start")
)
