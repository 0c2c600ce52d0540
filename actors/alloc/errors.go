package alloc

import "errors"

var (
	// ErrUnknownDriver is returned when a task names a driver the client lacks.
	ErrUnknownDriver = errors.New("alloc: unknown driver")
	// ErrIllegalTransition is returned for a task phase change the table forbids.
	ErrIllegalTransition = errors.New("alloc: illegal task transition")
)
