package hostpath

import "errors"

// Sentinel errors of the plugin's Go API (gRPC callers get status codes).
var (
	// ErrInvalidConfig: a Config that New refuses.
	ErrInvalidConfig = errors.New("hostpath: invalid config")
	// ErrUnknownMethod: a fault for a method the plugin does not serve.
	ErrUnknownMethod = errors.New("hostpath: unknown method")
	// ErrInvalidFault: a fault with a bad code, count or duration.
	ErrInvalidFault = errors.New("hostpath: invalid fault")
	// ErrAlreadyStarted: Start on a plugin that is serving.
	ErrAlreadyStarted = errors.New("hostpath: already started")
	// ErrControl: the control socket answered an error.
	ErrControl = errors.New("hostpath: control request failed")
)
