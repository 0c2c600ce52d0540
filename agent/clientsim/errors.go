package clientsim

import "errors"

// Sentinel errors.
var (
	// ErrConfig says a Config, ServerConfig or Scenario is unusable.
	ErrConfig = errors.New("clientsim: bad configuration")
	// ErrProc says a process's CPU time could not be read.
	ErrProc = errors.New("clientsim: reading process CPU time")
	// ErrServer says the server agent did not start or stopped.
	ErrServer = errors.New("clientsim: server agent")
	// ErrTimeout says the leader did not get somewhere in time.
	ErrTimeout = errors.New("clientsim: timed out")
)
