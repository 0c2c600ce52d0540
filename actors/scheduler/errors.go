package scheduler

import "errors"

// Sentinel errors returned by Process; callers match them with errors.Is.
var (
	// errNilEval is returned when Process is given no evaluation.
	errNilEval = errors.New("scheduler: nil evaluation")
	// errNilSnapshot is returned when Process is given no snapshot.
	errNilSnapshot = errors.New("scheduler: nil snapshot")
	// errMissingNewID is returned when Options.NewID is nil.
	errMissingNewID = errors.New("scheduler: options need NewID")
	// errMissingRand is returned when Options.Rand is nil.
	errMissingRand = errors.New("scheduler: options need a seeded Rand")
	// errUnknownJobType is returned for a job type other than service,
	// batch, system or sysbatch.
	errUnknownJobType = errors.New("scheduler: unknown job type")
)
