package scheduler

import "errors"

// Sentinel errors returned by Process; callers match them with errors.Is.
var (
	// ErrNilEval is returned when Process is given no evaluation.
	ErrNilEval = errors.New("scheduler: nil evaluation")
	// ErrNilSnapshot is returned when Process is given no snapshot.
	ErrNilSnapshot = errors.New("scheduler: nil snapshot")
	// ErrMissingNewID is returned when Options.NewID is nil.
	ErrMissingNewID = errors.New("scheduler: options need NewID")
	// ErrMissingRand is returned when Options.Rand is nil.
	ErrMissingRand = errors.New("scheduler: options need a seeded Rand")
	// ErrUnknownJobType is returned for a job type other than service,
	// batch, system or sysbatch.
	ErrUnknownJobType = errors.New("scheduler: unknown job type")
)
